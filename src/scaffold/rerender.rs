//! Bringing a file that operator-rs rendered, and that its user may have edited since, from one
//! render to the next: `edit` (the files of `init` after `--namespaced` or `--multigroup`) and the
//! webhook-certificate files (after `create webhook` or `edit --webhook-certs`), and the Helm
//! plugin its values.yaml (after `edit --sharding`), change only the blocks in which the two renders
//! differ, so the user's edits elsewhere stay.

/// Brings `current` from the render `old` to the render `new`: each block that differs is found
/// in `current` with a line of context on either side, or without context when it is unique, and
/// replaced. `None` when a block cannot be found exactly once.
pub fn patch(current: &str, old: &str, new: &str) -> Option<String> {
    if current == old {
        return Some(new.to_string());
    }
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let mut lines: Vec<String> = current.split_inclusive('\n').map(String::from).collect();
    for (a, b, c, d) in hunks(&old_lines, &new_lines) {
        let before: Vec<&str> = old_lines[a.saturating_sub(1)..a].to_vec();
        let after: Vec<&str> = old_lines.get(b).copied().into_iter().collect();
        let removed = &old_lines[a..b];
        let added = &new_lines[c..d];
        let candidates: Vec<(Vec<&str>, usize)> = {
            let mut with_context = before.clone();
            with_context.extend_from_slice(removed);
            with_context.extend(after.iter().copied());
            let mut list = vec![(with_context, before.len())];
            if !removed.is_empty() {
                list.push((removed.to_vec(), 0));
            }
            list
        };
        // Already there (an earlier edit, or the user's): nothing to do.
        let mut done = before.clone();
        done.extend_from_slice(added);
        done.extend(after.iter().copied());
        let mut applied = false;
        for (pattern, skip) in &candidates {
            if let Some(at) = find_unique(&lines, pattern) {
                let start = at + skip;
                lines.splice(
                    start..start + removed.len(),
                    added.iter().map(|s| s.to_string()),
                );
                applied = true;
                break;
            }
        }
        if !applied {
            if find_unique(&lines, &done).is_some() && !added.is_empty() {
                continue;
            }
            return None;
        }
    }
    Some(lines.concat())
}

/// The position of the only occurrence of `pattern` (a sequence of lines) in `lines`.
fn find_unique(lines: &[String], pattern: &[&str]) -> Option<usize> {
    if pattern.is_empty() || pattern.len() > lines.len() {
        return None;
    }
    let mut found = None;
    for i in 0..=lines.len() - pattern.len() {
        if lines[i..i + pattern.len()]
            .iter()
            .zip(pattern)
            .all(|(l, p)| l == p)
        {
            if found.is_some() {
                return None;
            }
            found = Some(i);
        }
    }
    found
}

/// The blocks where `new` differs from `old`: old lines `a..b` become new lines `c..d`.
fn hunks(old: &[&str], new: &[&str]) -> Vec<(usize, usize, usize, usize)> {
    let (n, m) = (old.len(), new.len());
    // lcs[i][j]: length of the longest common subsequence of old[i..] and new[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut open: Option<(usize, usize)> = None;
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            if let Some((a, c)) = open.take() {
                out.push((a, i, c, j));
            }
            i += 1;
            j += 1;
        } else {
            open.get_or_insert((i, j));
            if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
                j += 1;
            } else {
                i += 1;
            }
        }
    }
    if let Some((a, c)) = open {
        out.push((a, n, c, m));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_apply_around_the_users_edits() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nb\nX\nc\nd\n";
        assert_eq!(patch(old, old, new).unwrap(), new);
        let mine = "mine\na\nb\nc\nd\nmore\n";
        assert_eq!(
            patch(mine, old, new).unwrap(),
            "mine\na\nb\nX\nc\nd\nmore\n"
        );
        // Already there: nothing to do; back again: removed.
        assert_eq!(
            patch("mine\na\nb\nX\nc\nd\n", old, new).unwrap(),
            "mine\na\nb\nX\nc\nd\n"
        );
        assert_eq!(patch("a\nb\nX\nc\nd\n", new, old).unwrap(), old);
        // A block that is not there is refused.
        assert_eq!(patch("q\nr\n", "k: A\n", "k: B\n"), None);
    }
}
