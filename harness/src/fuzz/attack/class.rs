//! [`AttackClass`]: the one id type of an attack class, its weight in a draw, and what it
//! attacks (with the published escapes whose shape it generalises).

use snapconf_tarbytes::Rng;

/// One attack class: a family of member sequences that real extractors have been made to
/// write, link or change metadata outside their root with. The id is stable kebab-case, for
/// reports and for grouping findings (serde writes the same id).
///
/// The sequences are classes, not instances: each draw picks names (often the prior
/// workspace's own `a`, `d/` and `l -> ../decoy`), the view decoy it aims at, how the
/// target is spelled (absolute, `//`, exact `..` count, fewest `..`, more `..` than needed)
/// and how every member is encoded (ustar, ustar prefix, GNU `L`/`K`, PAX, PAX overriding a
/// ustar name that says something else).
#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum AttackClass {
    /// A directory replaced by a symlink between members that use it as a parent.
    DirToSymlink,
    /// The same path spelled differently by the members that swap and use it.
    SpellingCollision,
    /// A symlink re-pointed after something was created or validated through it.
    LinkRepoint,
    /// Directory metadata applied late, through a link swapped in meanwhile.
    LateDirMetadata,
    /// Symlinks created before the links they traverse.
    LinkChain,
    /// A link chain whose expanded form passes `PATH_MAX` while every written name fits.
    PathMaxChain,
    /// Hardlinks to decoys named absolutely or by `..`, with data or a file after them.
    HardlinkOutside,
    /// Hardlinks whose target traverses a symlink.
    HardlinkThroughLink,
    /// Hardlinks to symlinks, then a file written to the hardlink's name.
    HardlinkToSymlink,
    /// Hardlinks to members that come later (or to themselves).
    HardlinkForward,
    /// Members named by absolute paths, also `////abs` and `/./abs`.
    AbsoluteName,
    /// Members named with `..`: up to `/` and past it, inside-then-out, after a link.
    DotdotName,
    /// Names tools normalise differently: empty, `.`, `a//b`, `a/`, NUL, 99/100/155/255 bytes.
    NameForms,
    /// A PAX global header that renames every later member (or retargets every link).
    PaxGlobal,
    /// One name as two member types in either order.
    TypePairs,
    /// FIFOs and device nodes at decoy paths.
    SpecialOutside,
    /// FIFOs and device nodes inside the root, over the prior's names.
    SpecialInside,
    /// setuid, setgid and sticky modes on files, directories and the root.
    PrivilegedModes,
    /// Members that reach outside through the prior workspace's own names (`l`, `d`).
    PriorNames,
    /// Members hidden in the payload of a directory, link or special member.
    SizeSmuggle,
    /// Link targets inside as text, outside once followed: `y -> .`, then `x -> y/..`
    /// (tar-fs 3.0.8, CVE-2025-48387).
    LinkDotdot,
    /// Siblings named after the root (`../root-x`), reached by a link or a name (tar-fs
    /// 3.1.0's prefix check, CVE-2025-59343).
    RootPrefix,
    /// `\` as a separator in swap shapes: `a\b/`, `a\b -> ../out`, `a\b/pwned` (node-tar
    /// 6.1.0, CVE-2021-37701).
    BackslashName,
    /// NFC/NFD forms and lookalikes in swap shapes (node-tar's Unicode cache keys,
    /// CVE-2021-37712).
    UnicodeName,
    /// Names differing only in case in swap shapes (node-tar CVE-2021-37712 on
    /// case-insensitive filesystems).
    CaseCollision,
    /// Names with trailing dots or spaces in swap shapes (Windows strips them; the
    /// node-tar CVE-2021-37712 class).
    TrailingDotSpace,
    /// Drive prefixes (`c:d`, `c:../x`) in swap shapes (node-tar CVE-2021-37713).
    DriveRelative,
    /// A 256-byte component against its 255-byte cut, and empty components, in swap shapes
    /// (names a truncating or collapsing extractor folds, as node-tar's cache did).
    OverlongComponent,
}

impl AttackClass {
    /// Every class, in a stable order (the order of reports).
    pub const ALL: [AttackClass; 28] = [
        AttackClass::DirToSymlink,
        AttackClass::SpellingCollision,
        AttackClass::LinkRepoint,
        AttackClass::LateDirMetadata,
        AttackClass::LinkChain,
        AttackClass::PathMaxChain,
        AttackClass::HardlinkOutside,
        AttackClass::HardlinkThroughLink,
        AttackClass::HardlinkToSymlink,
        AttackClass::HardlinkForward,
        AttackClass::AbsoluteName,
        AttackClass::DotdotName,
        AttackClass::NameForms,
        AttackClass::PaxGlobal,
        AttackClass::TypePairs,
        AttackClass::SpecialOutside,
        AttackClass::SpecialInside,
        AttackClass::PrivilegedModes,
        AttackClass::PriorNames,
        AttackClass::SizeSmuggle,
        AttackClass::LinkDotdot,
        AttackClass::RootPrefix,
        AttackClass::BackslashName,
        AttackClass::UnicodeName,
        AttackClass::CaseCollision,
        AttackClass::TrailingDotSpace,
        AttackClass::DriveRelative,
        AttackClass::OverlongComponent,
    ];

    /// The stable kebab-case id (`dir-to-symlink`).
    pub fn id(self) -> &'static str {
        match self {
            AttackClass::DirToSymlink => "dir-to-symlink",
            AttackClass::SpellingCollision => "spelling-collision",
            AttackClass::LinkRepoint => "link-repoint",
            AttackClass::LateDirMetadata => "late-dir-metadata",
            AttackClass::LinkChain => "link-chain",
            AttackClass::PathMaxChain => "path-max-chain",
            AttackClass::HardlinkOutside => "hardlink-outside",
            AttackClass::HardlinkThroughLink => "hardlink-through-link",
            AttackClass::HardlinkToSymlink => "hardlink-to-symlink",
            AttackClass::HardlinkForward => "hardlink-forward",
            AttackClass::AbsoluteName => "absolute-name",
            AttackClass::DotdotName => "dotdot-name",
            AttackClass::NameForms => "name-forms",
            AttackClass::PaxGlobal => "pax-global",
            AttackClass::TypePairs => "type-pairs",
            AttackClass::SpecialOutside => "special-outside",
            AttackClass::SpecialInside => "special-inside",
            AttackClass::PrivilegedModes => "privileged-modes",
            AttackClass::PriorNames => "prior-names",
            AttackClass::SizeSmuggle => "size-smuggle",
            AttackClass::LinkDotdot => "link-dotdot",
            AttackClass::RootPrefix => "root-prefix",
            AttackClass::BackslashName => "backslash-name",
            AttackClass::UnicodeName => "unicode-name",
            AttackClass::CaseCollision => "case-collision",
            AttackClass::TrailingDotSpace => "trailing-dot-space",
            AttackClass::DriveRelative => "drive-relative",
            AttackClass::OverlongComponent => "overlong-component",
        }
    }

    /// The attack in one line, with the published escapes of that shape.
    pub fn about(self) -> &'static str {
        match self {
            AttackClass::DirToSymlink => {
                "`d/`, then `d -> /etc` (or `.`, `..`, `../../../..`), then `d/passwd`: extractors \
                 that cache created directories write through the new link (node-tar \
                 CVE-2021-32803, tar-rs CVE-2021-38511, BusyBox CVE-2011-5325)"
            }
            AttackClass::SpellingCollision => {
                "the swapped directory spelled `d/`, `./d`, `d//`, `d/.` by different members: \
                 checks keyed on raw names miss the collision (the directory-cache class of \
                 node-tar CVE-2021-37701 and CVE-2021-37712, there with backslashes and Unicode \
                 normalisation)"
            }
            AttackClass::LinkRepoint => {
                "`s -> in`, `s/ok`, then `s -> /etc`, `s/passwd`: a link judged once and reused \
                 after it was re-pointed (node-tar CVE-2021-32803's cache, a link in place of \
                 the directory)"
            }
            AttackClass::LateDirMetadata => {
                "`d/` mode 0777, then `d -> /etc`: modes applied at the end follow the link \
                 (GNU tar's delayed set_stat, libarchive CVE-2021-31566, Python CVE-2024-12718)"
            }
            AttackClass::LinkChain => {
                "`a -> b`, `b -> c`, `c -> /tmp`, then `a/decoy`: each link checked alone looks \
                 inside (Python tarfile filter bypasses CVE-2025-4138, CVE-2025-4330)"
            }
            AttackClass::PathMaxChain => {
                "16 levels of 240+ byte directories behind short links, a link whose expanded \
                 path passes PATH_MAX, an escape through it: realpath stops expanding and the \
                 check reads it lexically (Python CVE-2025-4517)"
            }
            AttackClass::HardlinkOutside => {
                "`h` hardlinked to `/etc/passwd` or `../../../../etc/passwd`, with data of its own \
                 or a file `h` after it (libarchive CVE-2016-5418, Python CVE-2025-4517's \
                 `flaglink`)"
            }
            AttackClass::HardlinkThroughLink => {
                "`s -> /etc`, then `h` hardlinked to `s/passwd` (or to the prior's `l`), then `h` \
                 written (tar-rs RUSTSEC-2018-0002 / CVE-2018-20990)"
            }
            AttackClass::HardlinkToSymlink => {
                "`s -> /etc/passwd`, `h` hardlinked to `s`, a file `h`: extractors that follow \
                 the symlink or fall back to a copy write or read the decoy (Python \
                 CVE-2025-4330)"
            }
            AttackClass::HardlinkForward => {
                "`h` hardlinked to `t` before `t` exists, then `t -> decoy`, then `h` written: \
                 deferred hardlinks resolve through what came later (GNU tar delayed links)"
            }
            AttackClass::AbsoluteName => {
                "`/etc/passwd`, `////etc/passwd`, `/./etc/passwd`: sanitisers that strip one `/` \
                 leave it absolute (node-tar CVE-2021-32804, Python CVE-2007-4559)"
            }
            AttackClass::DotdotName => {
                "`../../../../etc/passwd`, `x/y/../../../decoy`, `s/../etc/passwd` after \
                 `s -> /etc`, a `..` directory with mode 0777 (GNU tar CVE-2001-1267, \
                 CVE-2016-6321, Python CVE-2007-4559)"
            }
            AttackClass::NameForms => {
                "empty, `.`, `./`, `a//b`, `a/`, NUL in the name field, non-UTF-8, backslashes, \
                 names of 99/100/101/155/156/255/256/257 bytes: where parsers and normalisers \
                 part ways"
            }
            AttackClass::PaxGlobal => {
                "a PAX `g` header setting `path` or `linkpath`: Python tarfile applies it to \
                 every later member, tar-rs ignores it, the reference refuses it"
            }
            AttackClass::TypePairs => {
                "one name as two member types in either order (file/dir/symlink/hardlink/FIFO/\
                 devices), then a member under it: replace-or-follow decisions"
            }
            AttackClass::SpecialOutside => {
                "FIFOs, char device 1/3 (or 1/1) and block devices at decoy paths, named \
                 absolutely or by `..`"
            }
            AttackClass::SpecialInside => {
                "FIFOs and devices inside the root, over the prior's `a` and `d/f`, a FIFO \
                 followed by a file of its name (a writer that opens it blocks)"
            }
            AttackClass::PrivilegedModes => {
                "setuid/setgid/sticky files and directories, the root (`.`) at 7777"
            }
            AttackClass::PriorNames => {
                "a file written to the prior's `l -> ../decoy`, a hardlink to it, the prior's \
                 `d/` replaced by a link and `d/f` written through it (GNU tar CVE-2025-45582's \
                 two-step shape)"
            }
            AttackClass::SizeSmuggle => {
                "a directory, hardlink, symlink, FIFO or device member with a non-zero size whose \
                 payload is tar headers: readers that take its size as 0 (bsdtar, Python, BusyBox; \
                 GNU tar for hardlinks and directories) extract the hidden members, readers that \
                 skip by size (the reference, tar-rs) never see them (the desynchronisation class \
                 of CVE-2025-62518)"
            }
            AttackClass::LinkDotdot => {
                "`y -> .`, `x -> y/..` (or `y/y/..`, `./y/./..`, and `x2 -> x/..` a level higher), \
                 then `x/out/pwned` or `x/decoy`: each target reads inside the root as text and \
                 leaves it once followed (tar-fs 3.0.8 and later, CVE-2025-48387)"
            }
            AttackClass::RootPrefix => {
                "`s -> ../root-x`, then `s/pwned`, or a member `../rootx/pwned`: a containment check \
                 comparing string prefixes without a separator passes the root's sibling (tar-fs \
                 3.1.0, CVE-2025-59343)"
            }
            AttackClass::BackslashName => {
                "`a\\b/`, `a\\b -> ../out`, `a\\b/pwned`, and `a/b` against `a\\b`, in the swap, \
                 repoint and hardlink shapes (node-tar 6.1.0's path reservations, CVE-2021-37701)"
            }
            AttackClass::UnicodeName => {
                "`caf\u{e9}/` (NFC) against `cafe\u{301} -> ../out` (NFD), the ligature `\u{fb01}`, \
                 the Kelvin sign, Cyrillic and fullwidth letters, in the swap, repoint and \
                 hardlink shapes (node-tar's Unicode cache keys, CVE-2021-37712)"
            }
            AttackClass::CaseCollision => {
                "`D/` against `d -> ../out`, `d/pwned`: one name on a case-insensitive filesystem \
                 (node-tar CVE-2021-37712 on macOS and Windows)"
            }
            AttackClass::TrailingDotSpace => {
                "`d./` or `d /` against `d -> ../out`, `d/pwned`: Windows strips trailing dots \
                 and spaces, so the two are one there"
            }
            AttackClass::DriveRelative => {
                "`c:d/` against `d -> ../out`, `d/pwned`, and a member `c:../out/pwned`: a stripped \
                 drive leaves `..` (node-tar CVE-2021-37713)"
            }
            AttackClass::OverlongComponent => {
                "a 256-byte component against its 255-byte truncation, `w//d` against `w/d`, in \
                 the swap, repoint and hardlink shapes: truncating or collapsing extractors fold \
                 them into one name"
            }
        }
    }

    /// Relative weight in [`super::attack`]'s draw: the escapes real extractors had most
    /// weigh most.
    pub fn weight(self) -> usize {
        match self {
            AttackClass::DirToSymlink => 10,
            AttackClass::TypePairs => 8,
            AttackClass::LinkChain => 7,
            AttackClass::LinkRepoint | AttackClass::DotdotName | AttackClass::PriorNames => 6,
            AttackClass::SpellingCollision
            | AttackClass::LateDirMetadata
            | AttackClass::HardlinkOutside
            | AttackClass::HardlinkThroughLink
            | AttackClass::HardlinkToSymlink
            | AttackClass::NameForms => 5,
            AttackClass::HardlinkForward | AttackClass::AbsoluteName => 4,
            AttackClass::PathMaxChain
            | AttackClass::SizeSmuggle
            | AttackClass::SpecialOutside
            | AttackClass::SpecialInside
            | AttackClass::PrivilegedModes => 3,
            AttackClass::PaxGlobal => 2,
            // Issue 29's classes (lexical-versus-kernel targets, name normalisation).
            AttackClass::LinkDotdot => 6,
            AttackClass::BackslashName => 5,
            AttackClass::RootPrefix | AttackClass::UnicodeName | AttackClass::CaseCollision => 4,
            AttackClass::TrailingDotSpace
            | AttackClass::DriveRelative
            | AttackClass::OverlongComponent => 3,
        }
    }

    /// True if every archive of the class aims outside the root: an extractor that takes
    /// names and link targets as the kernel resolves them (no containment) writes, links or
    /// changes metadata at a view decoy or view directory. The other classes probe parsing,
    /// replacement and privileges inside the root.
    pub fn escapes(self) -> bool {
        !matches!(
            self,
            AttackClass::NameForms
                | AttackClass::TypePairs
                | AttackClass::SpecialInside
                | AttackClass::PrivilegedModes
        )
    }

    /// One class drawn by [`AttackClass::weight`] halved `halvings(class)` times: a session
    /// lowers a class once per cause it has kept of it, so its draws go to other bugs. The
    /// weight never reaches 0 (at least 1/64 of the lowest base weight). With no class
    /// lowered the draw is by the weights alone, as before any cause was kept.
    pub(super) fn draw_by(rng: &mut Rng, halvings: impl Fn(AttackClass) -> u32) -> AttackClass {
        let lowered = AttackClass::ALL.iter().any(|&c| halvings(c) > 0);
        let scale = if lowered { 6 } else { 0 };
        let weight = |c: AttackClass| ((c.weight() << scale) >> halvings(c).min(12)).max(1);
        let total: usize = AttackClass::ALL.iter().map(|&c| weight(c)).sum();
        let mut at = rng.below(total);
        for class in AttackClass::ALL {
            if at < weight(class) {
                return class;
            }
            at -= weight(class);
        }
        AttackClass::DirToSymlink
    }
}

impl std::fmt::Display for AttackClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}
