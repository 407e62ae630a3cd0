//! The project speaks of itself only: no tracked file (code, comments, test names, help texts,
//! docs) names the team's work periods ("the fifth session", "this session", "sessions") or
//! numbered tasks ("issue 12", "issue 13 item 6", `issue_11_…`). A sentence that needs such a
//! reference says instead what was decided or measured, and when (a date), and why.
//!
//! The words are matched by hand, on words rather than bytes: `issue`/`issues` followed by a
//! number (`issue 12`, `issue #12`, `Issue 16's`, or an identifier such as `issue_11_x` or
//! `issue16_x`), `item`/`items` followed by a number, and `session` only in a work period's
//! phrases: after an ordinal (`fifth`, `thirty-first`, `31st`) or a determiner (`this`, `last`,
//! `earlier`, `a`, `the`, …), or as `sessions`/`session's`. Other senses (a TLS or browser
//! session, `sessionStorage`, a `session` variable) pass. A phrase broken over two lines is
//! still seen: the last word of a line is read before the first word of the next.

use std::path::{Path, PathBuf};
use std::process::Command;

use emergo_tests::workspace_root;

/// This file, which has to name the words it looks for.
const THIS_FILE: &str = "tests/tests/e2e/wording.rs";

/// Files larger than this are data, not prose; they are skipped.
const MAX_BYTES: u64 = 4 << 20;

/// At most this many hits are listed in the failure message.
const MAX_LISTED: usize = 50;

/// Ordinal words (the last part of a compound such as `thirty-first`).
const ORDINALS: &[&str] = &[
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "thirtieth",
    "fortieth",
    "fiftieth",
    "sixtieth",
    "seventieth",
    "eightieth",
    "ninetieth",
    "hundredth",
];

/// Words that make a following `session` a work period.
const PERIOD_BEFORE: &[&str] = &[
    "this", "that", "last", "earlier", "previous", "next", "later", "same", "whole", "a", "an",
    "one", "each", "every", "the", "our", "my", "his", "her", "their", "its",
];

/// Words before `session(s)` that give it another sense.
const OTHER_SENSE_BEFORE: &[&str] = &[
    "tls", "ssl", "http", "https", "http2", "h2", "grpc", "browser", "ssh", "tmux", "screen",
    "shell", "terminal", "login", "user", "web", "client", "server", "database", "db", "sql",
    "debug", "debugger", "repl",
];

/// Words after `session(s)` that give it another sense.
const OTHER_SENSE_AFTER: &[&str] = &[
    "cookie",
    "cookies",
    "id",
    "ids",
    "key",
    "keys",
    "ticket",
    "tickets",
    "token",
    "tokens",
    "storage",
    "resumption",
    "cache",
    "store",
    "state",
];

/// One word of a line: its text (as written) and where it starts and ends, in bytes.
#[derive(Clone, Copy)]
struct Word<'a> {
    text: &'a str,
    start: usize,
    end: usize,
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '\'' | '’')
}

/// The words of a line: runs of letters, digits, `_`, `-` and apostrophes.
fn words(line: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (is_word_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(Word {
                    text: &line[s..i],
                    start: s,
                    end: i,
                });
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(Word {
            text: &line[s..],
            start: s,
            end: line.len(),
        });
    }
    out
}

/// A word lower-cased, with the apostrophe made plain and quotes and dashes around it dropped.
fn normal(word: &str) -> String {
    word.to_lowercase()
        .replace('’', "'")
        .trim_matches(|c| c == '\'' || c == '-')
        .to_owned()
}

fn is_ordinal(word: &str) -> bool {
    let last = word.rsplit('-').next().unwrap_or(word);
    if ORDINALS.contains(&last) {
        return true;
    }
    let digits = last.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &last[digits.len()..];
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
        && ["st", "nd", "rd", "th"].contains(&suffix)
}

/// Whether only blanks and comment or list markers lie between two words (a line break too).
fn only_markers(gap: &str) -> bool {
    gap.chars()
        .all(|c| c.is_whitespace() || matches!(c, '/' | '!' | '#' | '*' | '>' | '|' | '-'))
}

/// A word with what lies before it (back to the previous word) and that previous word.
struct Neighbour<'a> {
    gap: String,
    word: Option<Word<'a>>,
}

/// The previous word of `words[i]` on `line`, or else the last word of `prev_line`.
fn before<'a>(words: &[Word<'a>], i: usize, line: &'a str, prev_line: &'a str) -> Neighbour<'a> {
    if i > 0 {
        let w = words[i - 1];
        return Neighbour {
            gap: line[w.end..words[i].start].to_owned(),
            word: Some(w),
        };
    }
    let prev_words = self::words(prev_line);
    match prev_words.last() {
        Some(&w) => Neighbour {
            gap: format!("{}\n{}", &prev_line[w.end..], &line[..words[i].start]),
            word: Some(w),
        },
        None => Neighbour {
            gap: String::new(),
            word: None,
        },
    }
}

/// The next word of `words[i]` on `line`, or else the first word of `next_line`.
fn after<'a>(words: &[Word<'a>], i: usize, line: &'a str, next_line: &'a str) -> Neighbour<'a> {
    if let Some(&w) = words.get(i + 1) {
        return Neighbour {
            gap: line[words[i].end..w.start].to_owned(),
            word: Some(w),
        };
    }
    let next_words = self::words(next_line);
    match next_words.first() {
        Some(&w) => Neighbour {
            gap: format!("{}\n{}", &line[words[i].end..], &next_line[..w.start]),
            word: Some(w),
        },
        None => Neighbour {
            gap: String::new(),
            word: None,
        },
    }
}

/// Whether `word` (normalised) is `issue`/`issues` with a number glued on: `issue_11_x`,
/// `issue16_x`, `issues12`.
fn numbered_identifier(word: &str) -> bool {
    let rest = word
        .strip_prefix("issues")
        .or_else(|| word.strip_prefix("issue"));
    rest.is_some_and(|r| {
        r.trim_start_matches('_')
            .starts_with(|c: char| c.is_ascii_digit())
    })
}

/// Whether the word at `words[i]` starts a numbered task or a work period's phrase. The lines
/// around are read for phrases broken over two lines.
fn flagged(words: &[Word<'_>], i: usize, prev: &str, line: &str, next: &str) -> bool {
    let word = normal(words[i].text);
    if numbered_identifier(&word) {
        return true;
    }
    if matches!(word.as_str(), "issue" | "issues" | "item" | "items") {
        let n = after(words, i, line, next);
        return n.word.is_some_and(|w| {
            w.text.starts_with(|c: char| c.is_ascii_digit())
                && n.gap.chars().all(|c| c.is_whitespace() || c == '#')
        }) || n.word.is_some_and(|w| {
            // A number on the next line, after a comment marker.
            w.text.starts_with(|c: char| c.is_ascii_digit())
                && n.gap.contains('\n')
                && only_markers(&n.gap)
        });
    }
    let plural_or_possessive = matches!(
        word.as_str(),
        "sessions" | "session's" | "sessions'" | "sessions's"
    );
    if word != "session" && !plural_or_possessive {
        return false;
    }
    let b = before(words, i, line, prev);
    let a = after(words, i, line, next);
    let b_word = b
        .word
        .filter(|_| only_markers(&b.gap))
        .map(|w| normal(w.text));
    let a_word = a
        .word
        .filter(|_| a.gap.chars().all(char::is_whitespace))
        .map(|w| normal(w.text));
    if b_word
        .as_deref()
        .is_some_and(|w| OTHER_SENSE_BEFORE.contains(&w))
        || a_word
            .as_deref()
            .is_some_and(|w| OTHER_SENSE_AFTER.contains(&w))
    {
        return false;
    }
    plural_or_possessive
        || b_word
            .as_deref()
            .is_some_and(|w| is_ordinal(w) || PERIOD_BEFORE.contains(&w))
}

/// The 1-based numbers of the lines of `text` that name a work period or a numbered task.
fn hits(text: &str) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let prev = if n > 0 { lines[n - 1] } else { "" };
        let next = lines.get(n + 1).copied().unwrap_or("");
        let ws = words(line);
        if (0..ws.len()).any(|i| flagged(&ws, i, prev, line, next)) {
            out.push(n + 1);
        }
    }
    out
}

/// The tracked files, relative to `root`: `git ls-files`, or where git is not at hand every
/// file under `root` but build output and git's own.
fn tracked_files(root: &Path) -> Vec<PathBuf> {
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output();
    if let Some(out) = listed
        .ok()
        .filter(|out| out.status.success() && !out.stdout.is_empty())
    {
        return out
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
            .collect();
    }
    let mut files = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let relative = dir.join(&name);
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !matches!(name.to_str(), Some("target" | ".git" | "node_modules")) {
                    stack.push(relative);
                }
            } else if kind.is_file() {
                files.push(relative);
            }
        }
    }
    files.sort();
    files
}

/// The text of a file, or `None` for one that is missing, too large, binary or not UTF-8.
fn text_of(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[test]
fn no_work_periods_or_numbered_tasks_are_named() {
    let root = workspace_root();
    let files = tracked_files(&root);
    assert!(!files.is_empty(), "no files found under {}", root.display());
    let mut found = Vec::new();
    let mut read = 0;
    for relative in &files {
        let name = relative.to_string_lossy().replace('\\', "/");
        if name == THIS_FILE {
            continue;
        }
        let Some(text) = text_of(&root.join(relative)) else {
            continue;
        };
        read += 1;
        let lines: Vec<&str> = text.lines().collect();
        for n in hits(&text) {
            let line = lines[n - 1].trim();
            let shown: String = line.chars().take(160).collect();
            found.push(format!("{name}:{n}: {shown}"));
        }
    }
    assert!(read > 0, "no readable text files under {}", root.display());
    if !found.is_empty() {
        let listed = found.len().min(MAX_LISTED);
        panic!(
            "{} line(s) name a work period or a numbered task; say what was decided or \
             measured, and when, instead{}:\n{}",
            found.len(),
            if listed < found.len() {
                format!(" (the first {listed} listed)")
            } else {
                String::new()
            },
            found[..listed].join("\n")
        );
    }
}

/// The matcher itself: what it must catch, and the other senses it must let pass.
#[test]
fn the_matcher_tells_work_periods_from_other_senses() {
    let caught = [
        "Issue 13 item 2: with every thread pondering",
        "measured (issue 12 item 8: 100 BestMove calls)",
        "see issue #12",
        "Issue 16's 90% target",
        "fn issue_11_modules_import_without_cycles() {",
        "async fn issue16_tree_memory_flag_is_checked() {",
        "items 1 and 4",
        "- 2026-12-07 (thirty-third session), the same pairing",
        "Fifth session: the quiescence search",
        "the twentieth session's bench",
        "as in the earlier sessions, it was not taken",
        "86.9% in the bench this session.",
        "stopped at the session's end after 106 games",
        "at the 31st session",
        "tenth sessions' instruction cuts",
    ];
    for line in caught {
        assert_eq!(hits(line), [1], "should be caught: {line}");
    }
    // Broken over two lines.
    assert_eq!(
        hits("the same as the thirty-first\n//! session, above"),
        [2]
    );
    assert_eq!(
        hits("before they expire. Issue\n//! 16 item 2: searches"),
        [1, 2]
    );
    let passed = [
        "/// The whole browser session (eight scenarios, a few engine moves)",
        "the TLS session is resumed",
        "a session ticket from the server",
        "sessionStorage.setItem('board', fen);",
        "const session = await browser.newContext();",
        "TLS sessions are not cached",
        "an issue with the clock",
        "the issues it raised",
        "each item of the list",
        "items: Vec<u32>,",
        "tissue 12",
        "issue, 12 runs",
        "the first item, 3 of them",
    ];
    for line in passed {
        assert!(hits(line).is_empty(), "should pass: {line}");
    }
}
