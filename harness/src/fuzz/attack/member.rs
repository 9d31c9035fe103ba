//! One member as an attack means it, before any encoding (kind, raw name, raw link target,
//! payload, mode), [`Seq`], the list the class families write into, and the small random
//! choices they share.

use super::encode::Enc;
use snapconf_tarbytes::Rng;

/// What a member is. The type flag that states it (`0`, V7 `\0` or contiguous `7` for a
/// file; `5` or V7 `\0` with a trailing `/` for a directory) is drawn when the archive is
/// encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AttackKind {
    File,
    Dir,
    Symlink,
    Hardlink,
    Fifo,
    CharDevice,
    BlockDevice,
}

impl AttackKind {
    /// The word a description uses.
    pub(super) fn word(self) -> &'static str {
        match self {
            AttackKind::File => "file",
            AttackKind::Dir => "dir",
            AttackKind::Symlink => "symlink",
            AttackKind::Hardlink => "hardlink",
            AttackKind::Fifo => "fifo",
            AttackKind::CharDevice => "char",
            AttackKind::BlockDevice => "block",
        }
    }

    /// The mode a member of this kind gets unless the attack sets one.
    fn default_mode(self) -> u32 {
        match self {
            AttackKind::Dir => 0o755,
            AttackKind::Symlink => 0o777,
            _ => 0o644,
        }
    }
}

/// The payload of every file an attack writes: unique, so a decoy that holds it afterwards
/// was written by the attack.
pub(super) const PAYLOAD: &[u8] = b"snapconf attack payload\n";

/// One member of an attack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct AttackMember {
    pub(super) kind: AttackKind,
    /// The name, raw bytes, exactly as the attack spells it.
    pub(super) name: Vec<u8>,
    /// The target of a symlink or hardlink (empty otherwise).
    pub(super) link: Vec<u8>,
    /// The payload; a hardlink may carry one too (libarchive CVE-2016-5418).
    pub(super) data: Vec<u8>,
    /// Permission bits as stored, setuid, setgid and sticky included.
    pub(super) mode: u32,
    /// Major and minor number of a device node.
    pub(super) device: (u64, u64),
    /// The encoding this member must use when it can carry the name (else one is drawn).
    pub(super) enc: Option<Enc>,
    /// Records of a PAX global header (`g`) written in front of this member.
    pub(super) global: Vec<(&'static str, Vec<u8>)>,
    /// Filler around the attack, not part of it.
    pub(super) benign: bool,
    /// Members whose headers make up `data`: what a reader that takes this member's size
    /// as 0 reads next.
    pub(super) hidden: Vec<AttackMember>,
}

impl AttackMember {
    /// Set the permission bits.
    pub(super) fn mode(&mut self, mode: u32) -> &mut Self {
        self.mode = mode;
        self
    }
    /// Ask for an encoding.
    pub(super) fn enc(&mut self, enc: Enc) -> &mut Self {
        self.enc = Some(enc);
        self
    }
    /// Give the member a payload.
    pub(super) fn data(&mut self, data: &[u8]) -> &mut Self {
        self.data = data.to_vec();
        self
    }
    /// Set a device node's numbers.
    pub(super) fn device(&mut self, major: u64, minor: u64) -> &mut Self {
        self.device = (major, minor);
        self
    }
    /// Put a PAX global header with `records` in front of this member.
    pub(super) fn global(&mut self, records: Vec<(&'static str, Vec<u8>)>) -> &mut Self {
        self.global = records;
        self
    }
}

/// The members of one archive, in archive order.
#[derive(Clone, Debug, Default)]
pub(super) struct Seq {
    pub(super) members: Vec<AttackMember>,
}

impl Seq {
    /// Append a member of `kind` with its kind's defaults: mode 0644 (0755 directories,
    /// 0777 symlinks), [`PAYLOAD`] for a file, device 1/3 (`/dev/null`) or block 7/0
    /// (`/dev/loop0`).
    pub(super) fn push(
        &mut self,
        kind: AttackKind,
        name: impl AsRef<[u8]>,
        link: impl AsRef<[u8]>,
    ) -> &mut AttackMember {
        let device = match kind {
            AttackKind::CharDevice => (1, 3),
            AttackKind::BlockDevice => (7, 0),
            _ => (0, 0),
        };
        let data = if kind == AttackKind::File {
            PAYLOAD.to_vec()
        } else {
            Vec::new()
        };
        self.members.push(AttackMember {
            kind,
            name: name.as_ref().to_vec(),
            link: link.as_ref().to_vec(),
            data,
            mode: kind.default_mode(),
            device,
            enc: None,
            global: Vec::new(),
            benign: false,
            hidden: Vec::new(),
        });
        let at = self.members.len() - 1;
        &mut self.members[at]
    }

    /// A regular file holding [`PAYLOAD`].
    pub(super) fn file(&mut self, name: impl AsRef<[u8]>) -> &mut AttackMember {
        self.push(AttackKind::File, name, b"")
    }
    /// A directory.
    pub(super) fn dir(&mut self, name: impl AsRef<[u8]>) -> &mut AttackMember {
        self.push(AttackKind::Dir, name, b"")
    }
    /// A symlink to `target`.
    pub(super) fn symlink(
        &mut self,
        name: impl AsRef<[u8]>,
        target: impl AsRef<[u8]>,
    ) -> &mut AttackMember {
        self.push(AttackKind::Symlink, name, target)
    }
    /// A hardlink to `target` (read from the archive's root).
    pub(super) fn hardlink(
        &mut self,
        name: impl AsRef<[u8]>,
        target: impl AsRef<[u8]>,
    ) -> &mut AttackMember {
        self.push(AttackKind::Hardlink, name, target)
    }
    /// A FIFO or device node.
    pub(super) fn special(
        &mut self,
        kind: AttackKind,
        name: impl AsRef<[u8]>,
    ) -> &mut AttackMember {
        self.push(kind, name, b"")
    }
}

/// True with probability 1/`n`.
pub(super) fn one_in(rng: &mut Rng, n: usize) -> bool {
    rng.below(n) == 0
}

/// One item of a non-empty list.
pub(super) fn choose<T: Copy>(rng: &mut Rng, items: &[T]) -> T {
    items[rng.below(items.len())]
}

/// `items` in a random order (Fisher-Yates).
pub(super) fn shuffle<T>(rng: &mut Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i + 1));
    }
}

/// `n` different items of `items` (all of them if there are fewer), in a random order.
pub(super) fn distinct<T: Copy>(rng: &mut Rng, items: &[T], n: usize) -> Vec<T> {
    let mut all = items.to_vec();
    shuffle(rng, &mut all);
    all.truncate(n);
    all
}

/// `name` with a trailing `/` half of the time: tar writers differ on it for directories.
pub(super) fn maybe_slash(rng: &mut Rng, name: &[u8]) -> Vec<u8> {
    let mut n = name.to_vec();
    if one_in(rng, 2) && !n.ends_with(b"/") {
        n.push(b'/');
    }
    n
}
