//! An archive's members as snapconf compares them: names in normal form, kinds as the
//! reference parser's [`MemberKind`]. Listed with the reference parser for the capture-side
//! checks and the report; built from each parser's fields for the parser differential.

use snapconf_extract::{normalise_name, MemberKind};
use std::io::Read;

/// One member normalised for comparison; every listing in the harness (the reference's, the
/// `tar` crate's, each external parser's) is a list of these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The name in normal form ([`normalise_name`]: `./a//b/` is `a/b`; the root member `.`
    /// is the empty name).
    pub name: Vec<u8>,
    /// The kind; an unknown type flag stays [`MemberKind::Other`] with its byte.
    pub kind: MemberKind,
    /// Symlink target verbatim, hardlink target in normal form; `None` for other kinds.
    pub link_target: Option<Vec<u8>>,
    /// Payload size in bytes for regular files; `None` for other kinds (parsers differ on
    /// the header size of non-regular members, and no extractor writes it).
    pub size: Option<u64>,
}

impl Member {
    /// A member from a parser's raw fields: the name and a hardlink target put in normal
    /// form, the link kept only for links, the size only for regular files.
    pub fn new(name: &[u8], kind: MemberKind, link: Option<&[u8]>, size: u64) -> Member {
        let link_target = match kind {
            MemberKind::Symlink => Some(link.unwrap_or_default().to_vec()),
            MemberKind::Hardlink => Some(normalise_name(link.unwrap_or_default())),
            _ => None,
        };
        Member {
            name: normalise_name(name),
            kind,
            link_target,
            size: (kind == MemberKind::File).then_some(size),
        }
    }

    /// True for a hardlink (LNK, type `1`) member.
    pub fn is_hardlink(&self) -> bool {
        self.kind == MemberKind::Hardlink
    }
}

/// List every member of a tar archive with the reference parser (`snapconf_extract::list`):
/// PAX records are split by their length prefix, so a `path` or `linkpath` holding a newline
/// is read whole. (The `tar` crate 0.4.46 splits PAX records at newlines and then falls back
/// to the ustar `linkname`, `././@LongHardLink`: a false `dangling-link` on bsdtar archives of
/// names with a newline. The parser differential keeps that crate's view for comparison.)
/// A gzip-compressed archive is decompressed first ([`archive_tar`]). `Err` carries the
/// parser's message when the archive cannot be read to the end.
pub fn list_members(mut archive: impl Read) -> Result<Vec<Member>, String> {
    let mut bytes = Vec::new();
    archive
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read archive: {e}"))?;
    archive_tar(&bytes).1
}

/// The tar stream inside an archive's `bytes`, decompressed once, and its members (as
/// [`list_members`] gives them). The stream is `bytes` itself, or for a compressed archive
/// (gzip, zstd or xz, told by its magic number through the reference's one detection,
/// [`snapconf_extract::compression::tar_stream`]; what `tar -cz`, `tar --zstd` and agno's
/// checkpoints write) the decompressed stream; one that cannot be decompressed to its end
/// gives what could be read (so a search of the bytes, for canaries, still sees everything
/// the archive holds) and an `Err` listing.
pub fn archive_tar(bytes: &[u8]) -> (std::borrow::Cow<'_, [u8]>, Result<Vec<Member>, String>) {
    use snapconf_extract::compression::{tar_stream, Compression};
    let members = |tar: &[u8]| -> Result<Vec<Member>, snapconf_extract::HydrateError> {
        Ok(snapconf_extract::list_tar(tar)?
            .members
            .iter()
            .map(|m| Member::new(&m.name, m.kind, m.link_target.as_deref(), m.size))
            .collect())
    };
    let (kind, mut stream) = match tar_stream(bytes, &snapconf_extract::Limits::default()) {
        Ok(found) => found,
        Err(e) => {
            return (
                std::borrow::Cow::Borrowed(bytes),
                Err(format!("cannot read archive: {e}")),
            )
        }
    };
    if kind == Compression::None {
        let listed = members(bytes).map_err(|e| format!("cannot read archive: {e}"));
        return (std::borrow::Cow::Borrowed(bytes), listed);
    }
    let mut tar = Vec::new();
    let inflated = stream.read_to_end(&mut tar);
    let listed = match inflated {
        Ok(_) => members(&tar).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
    .map_err(|e| format!("cannot read {}-compressed archive: {e}", kind.name()));
    (std::borrow::Cow::Owned(tar), listed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gzip-compressed archive lists the members of the tar inside it; a damaged one is an
    /// error, never an empty list.
    #[test]
    fn gzip_archives_are_listed_through_the_decompressor() {
        use std::io::Write;
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_ustar();
        h.set_mode(0o644);
        h.set_size(1);
        h.set_cksum();
        b.append_data(&mut h, "a", &b"x"[..]).expect("file");
        let tar = b.into_inner().expect("finish");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).expect("compress");
        let gz = gz.finish().expect("finish gzip");
        let ms = list_members(&gz[..]).expect("lists");
        assert_eq!(ms.len(), 1);
        assert_eq!(ms[0].name, b"a");
        let cut = &gz[..gz.len() / 2];
        let e = list_members(cut).expect_err("a cut gzip stream does not list");
        assert!(e.contains("gzip"), "{e}");
    }

    /// A PAX `linkpath` whose value holds a newline (bsdtar writes one for a hardlink to
    /// `dir/new\nline`) is read whole: no false `dangling-link`.
    #[test]
    fn pax_values_with_a_newline_are_read_whole() {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_ustar();
        h.set_mode(0o644);
        h.set_size(1);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        b.append_data(&mut h, "d/new\nline", &b"x"[..])
            .expect("file");
        let link = b"d/new\nline";
        let rec_len = format!(" linkpath={}\n", String::from_utf8_lossy(link)).len();
        let mut n = rec_len + 1;
        while format!("{n}").len() + rec_len != n {
            n += 1;
        }
        let record = format!("{n} linkpath={}\n", String::from_utf8_lossy(link));
        let mut x = tar::Header::new_ustar();
        x.set_mode(0o644);
        x.set_size(record.len() as u64);
        x.set_entry_type(tar::EntryType::XHeader);
        x.set_cksum();
        b.append_data(&mut x, "PaxHeader/l", record.as_bytes())
            .expect("pax");
        let mut l = tar::Header::new_ustar();
        l.set_mode(0o644);
        l.set_size(0);
        l.set_entry_type(tar::EntryType::Link);
        l.set_link_name("././@LongHardLink").expect("link");
        l.set_cksum();
        b.append_data(&mut l, "l", &b""[..]).expect("lnk");
        let bytes = b.into_inner().expect("finish");
        let ms = list_members(&bytes[..]).expect("lists");
        assert_eq!(ms[1].link_target.as_deref(), Some(&b"d/new\nline"[..]));
        // The hardlink names a member before it: it does not dangle.
        assert!(
            ms[..1]
                .iter()
                .any(|m| Some(m.name.as_slice()) == ms[1].link_target.as_deref()),
            "{ms:?}"
        );
    }

    /// Listed names and hardlink targets are in normal form, whatever shape the archive
    /// stored them in: `./a`, `a//b`, `a/./b`, `d/` (GNU tar writes the first and the last).
    #[test]
    fn listed_names_and_hardlink_targets_are_in_normal_form() {
        let mut t = snapconf_tarbytes::raw::RawTar::new();
        t.dir("./d/")
            .file("d//f", b"x")
            .hardlink("d/./g", "./d//f")
            .symlink("l", "./d//f");
        let ms = list_members(&t.finish()[..]).expect("lists");
        let names: Vec<&[u8]> = ms.iter().map(|m| m.name.as_slice()).collect();
        assert_eq!(names, [&b"d"[..], b"d/f", b"d/g", b"l"]);
        assert_eq!(
            ms[2].link_target.as_deref(),
            Some(&b"d/f"[..]),
            "hardlink target"
        );
        assert_eq!(
            ms[3].link_target.as_deref(),
            Some(&b"./d//f"[..]),
            "a symlink target is verbatim"
        );
        assert_eq!(
            (ms[0].size, ms[1].size, ms[2].size),
            (None, Some(1), None),
            "sizes of regular files only"
        );
    }

    proptest::proptest! {
        /// Property: the normal form of a name built from components and separators in any
        /// shape (doubled `/`, `./`, a trailing `/`, inner `.`) is its non-empty, non-`.`
        /// components joined by one `/`, and normalising it again changes nothing.
        #[test]
        fn normal_form_is_the_components_joined(
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["a", "b", "", ".", "..", "\u{ff}", "c c"]),
                0..8,
            ),
            lead in proptest::sample::select(vec!["", "./", "/", ".//"]),
            trail in proptest::sample::select(vec!["", "/", "//", "/."]),
        ) {
            let raw = format!("{lead}{}{trail}", parts.join("/"));
            let want: Vec<&str> = parts
                .iter()
                .copied()
                .filter(|p| !p.is_empty() && *p != ".")
                .collect();
            let got = normalise_name(raw.as_bytes());
            proptest::prop_assert_eq!(
                &got,
                &want.join("/").into_bytes(),
                "`{}` normalises to its components joined by `/`",
                raw
            );
            proptest::prop_assert_eq!(
                normalise_name(&got),
                got.clone(),
                "the normal form of `{}` is a fixed point",
                raw
            );
        }
    }
}
