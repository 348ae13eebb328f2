//! Which process holds the write lock of a database, for the error a lock held past the wait
//! gives: "held by process 4242 (sqlite3)" tells a person what to close, where "database is
//! locked" does not.
//!
//! SQLite locks byte ranges of its files with POSIX locks, which Linux lists in `/proc/locks`
//! with the holder's pid and the file's device and inode. A writer holds, in WAL mode, a write
//! lock on byte 120 of the `-shm` file; in rollback mode, a write lock on the database file's
//! RESERVED byte (0x40000001) or its shared range (0x40000002 on, EXCLUSIVE). Elsewhere (no
//! `/proc/locks`) the holder is said to be unknown.

use std::path::{Path, PathBuf};

/// A process holding a write lock on the database or its shared-memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LockHolder {
    pub pid: u32,
    /// The holder's command name (`/proc/<pid>/comm`), when readable.
    pub command: Option<String>,
}

impl std::fmt::Display for LockHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.pid == std::process::id() {
            return write!(f, "another connection of this process (pid {})", self.pid);
        }
        match &self.command {
            Some(command) => write!(f, "process {} ({command})", self.pid),
            None => write!(f, "process {}", self.pid),
        }
    }
}

/// The WAL write lock's byte in the `-shm` file (SQLite's UNIX_SHM_BASE + WAL_WRITE_LOCK).
const WAL_WRITE_LOCK_BYTE: u64 = 120;
/// Rollback mode: RESERVED, then the shared range an EXCLUSIVE lock covers whole.
const RESERVED_BYTE: u64 = 0x4000_0001;
const SHARED_FIRST: u64 = 0x4000_0002;

/// The processes holding the write lock of the database at `db`, as the system lists them.
fn lock_holders(db: &Path) -> Vec<LockHolder> {
    let Ok(table) = std::fs::read_to_string("/proc/locks") else {
        return Vec::new();
    };
    let shm = PathBuf::from(format!("{}-shm", db.display()));
    let targets: Vec<(FileId, &[u64])> = [(db.to_path_buf(), &[RESERVED_BYTE, SHARED_FIRST][..]), (shm, &[WAL_WRITE_LOCK_BYTE][..])]
        .into_iter()
        .filter_map(|(path, bytes)| file_id(&path).map(|id| (id, bytes)))
        .collect();
    let mut holders: Vec<LockHolder> = Vec::new();
    for line in table.lines() {
        let Some(lock) = parse_lock(line) else { continue };
        let writes_there = targets.iter().any(|(id, bytes)| *id == lock.file && bytes.iter().any(|b| lock.covers(*b)));
        if lock.write && writes_there && !holders.iter().any(|h| h.pid == lock.pid) {
            holders.push(LockHolder { pid: lock.pid, command: command_of(lock.pid) });
        }
    }
    holders
}

/// What an error says about who holds the lock.
pub(super) fn describe(db: &Path) -> String {
    if !Path::new("/proc/locks").exists() {
        return "which process holds it is not known on this system".into();
    }
    match lock_holders(db).as_slice() {
        [] => "no process holds it now, or the holder could not be found".into(),
        holders => format!("held by {}", holders.iter().map(|h| h.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// A file as `/proc/locks` names it: device major and minor numbers, inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    major: u64,
    minor: u64,
    inode: u64,
}

#[cfg(unix)]
fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path).ok()?;
    let dev = metadata.dev();
    // glibc's gnu_dev_major / gnu_dev_minor: how Linux packs the numbers into st_dev.
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    Some(FileId { major, minor, inode: metadata.ino() })
}

#[cfg(not(unix))]
fn file_id(_path: &Path) -> Option<FileId> {
    None
}

/// One granted lock of `/proc/locks`.
#[derive(Debug, PartialEq, Eq)]
struct Lock {
    pid: u32,
    write: bool,
    file: FileId,
    start: u64,
    /// None: to the end of the file.
    end: Option<u64>,
}

impl Lock {
    fn covers(&self, byte: u64) -> bool {
        self.start <= byte && self.end.is_none_or(|end| byte <= end)
    }
}

/// `1: POSIX  ADVISORY  WRITE 4242 08:01:1234567 120 120`. Lines of waiters (`1: -> POSIX …`)
/// and open-file-description locks (no pid) are not holders.
fn parse_lock(line: &str) -> Option<Lock> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [_, kind, _, access, pid, file, start, end] = fields.as_slice() else {
        return None;
    };
    if *kind != "POSIX" && *kind != "FLOCK" {
        return None;
    }
    let mut parts = file.split(':');
    let (major, minor, inode) = (parts.next()?, parts.next()?, parts.next()?);
    Some(Lock {
        pid: pid.parse().ok()?,
        write: *access == "WRITE",
        file: FileId {
            major: u64::from_str_radix(major, 16).ok()?,
            minor: u64::from_str_radix(minor, 16).ok()?,
            inode: inode.parse().ok()?,
        },
        start: start.parse().ok()?,
        end: if *end == "EOF" { None } else { Some(end.parse().ok()?) },
    })
}

/// The command name of a process, as `ps` shows it (what the process calls itself: untrusted
/// text, kept to printable characters).
fn command_of(pid: u32) -> Option<String> {
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    let name: String = name.trim().chars().filter(|c| !c.is_control()).collect();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_lines_are_read_as_the_kernel_writes_them() {
        let lock = parse_lock("1: POSIX  ADVISORY  WRITE 4242 fd:01:1234567 120 120").unwrap();
        assert_eq!(lock, Lock { pid: 4242, write: true, file: FileId { major: 0xfd, minor: 1, inode: 1234567 }, start: 120, end: Some(120) });
        assert!(lock.covers(120) && !lock.covers(121));
        let to_end = parse_lock("2: FLOCK  ADVISORY  READ 7 00:2e:99 0 EOF").unwrap();
        assert!(!to_end.write && to_end.covers(u64::MAX));
        // A waiter is not a holder; an open-file-description lock has no pid to name.
        assert_eq!(parse_lock("1: -> POSIX  ADVISORY  WRITE 4243 fd:01:1234567 120 120"), None);
        assert_eq!(parse_lock("3: OFDLCK ADVISORY  WRITE -1 00:06:9 0 EOF"), None);
    }
}
