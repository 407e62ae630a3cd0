//! Reading the operator's files at start-up (the token file, TLS certificates and keys), each
//! with a size cap (a value network named in `--mcts` is capped by the engine's own loader,
//! `emergo_engine::value_net::load`).
//!
//! A flag pointed at the wrong path must fail at once, not read forever: `/dev/zero` or
//! `/dev/urandom` never end, and a log file given by mistake can be gigabytes. So every file is
//! read through [`read_capped`], which reads one byte past the cap and refuses the file when that
//! byte exists, instead of trusting the size the file system reports (a device or a pipe reports
//! none). Each caller turns [`ReadError`] into its own error naming the flag and the file.

use std::io::{self, Read};
use std::path::Path;

/// Why a capped read gave up.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read (missing, unreadable).
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The file holds more than the cap; no more than one byte past it was read.
    #[error("longer than {cap} bytes, far more than such a file holds (is it the right file?)")]
    TooLarge {
        /// The cap, in bytes.
        cap: u64,
    },
}

/// The contents of `path`, at most `cap` bytes; [`ReadError::TooLarge`] after reading
/// `cap + 1` bytes of a longer file, however long (or endless) it is.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge { cap });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn reads_up_to_the_cap_and_refuses_one_byte_more() {
        let path = std::env::temp_dir().join(format!("emergo-capped-{}", std::process::id()));
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_capped(&path, 10).unwrap(), b"0123456789");
        assert_eq!(read_capped(&path, 64).unwrap(), b"0123456789");
        let e = read_capped(&path, 9).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge { cap: 9 }), "{e:?}");
        assert!(e.to_string().contains("longer than 9 bytes"), "{e}");
        std::fs::remove_file(&path).unwrap();
        let e = read_capped(&path, 9).unwrap_err();
        assert!(matches!(e, ReadError::Io(_)), "{e:?}");
    }

    #[test]
    fn endless_files_are_refused_at_once() {
        for endless in ["/dev/zero", "/dev/urandom"] {
            if !Path::new(endless).exists() {
                continue;
            }
            let start = Instant::now();
            let e = read_capped(Path::new(endless), 1 << 20).unwrap_err();
            assert!(matches!(e, ReadError::TooLarge { .. }), "{endless}: {e:?}");
            assert!(start.elapsed() < Duration::from_secs(1), "{endless}");
        }
    }
}
