//! The book's commands run as written: every ```` ```sh ```` block of `docs/book/src/*.md`
//! (but one marked `sh norun`, which says why beside it) is run line by line through `sh`, from
//! the repository root, with `splitbrain` on the PATH. A line's trailing `# exit N` is the exit
//! code it must give (0 otherwise); its standard output is pinned by an insta snapshot, so a
//! change of what a page shows is seen in review. A JSON block after the comment
//! `<!-- book-test: file NAME -->` is written to NAME in a scratch folder, and so is every
//! `/tmp/...` path the commands name, so the pages can say `/tmp` and nothing outside the
//! scratch folder is touched.

use super::common::repo;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One command of a page: its line (continuations joined), the exit code it must give.
struct Step {
    line: String,
    exit: i32,
}

/// A page's runnable steps and the files it names, in order.
fn steps(page: &str) -> (Vec<Step>, Vec<(String, String)>) {
    let (mut steps, mut files) = (Vec::new(), Vec::new());
    let mut lines = page.lines();
    let mut pending_file: Option<String> = None;
    while let Some(l) = lines.next() {
        if let Some(name) = l
            .trim()
            .strip_prefix("<!-- book-test: file ")
            .and_then(|r| r.strip_suffix(" -->"))
        {
            pending_file = Some(name.to_string());
        } else if l.starts_with("```json") {
            let body: Vec<&str> = lines
                .by_ref()
                .take_while(|b| !b.starts_with("```"))
                .collect();
            if let Some(name) = pending_file.take() {
                files.push((name, body.join("\n")));
            }
        } else if l.trim_end() == "```sh" {
            let mut joined = String::new();
            for b in lines.by_ref().take_while(|b| !b.starts_with("```")) {
                let b = b.trim();
                if let Some(head) = b.strip_suffix('\\') {
                    joined.push_str(head);
                    continue;
                }
                joined.push_str(b);
                let line = std::mem::take(&mut joined);
                if line.is_empty() {
                    continue;
                }
                let exit = line
                    .split_once("# exit ")
                    .map(|(_, n)| {
                        let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
                        digits.parse().expect("`# exit N` names a number")
                    })
                    .unwrap_or(0);
                steps.push(Step { line, exit });
            }
        } else if l.starts_with("```") {
            lines
                .by_ref()
                .take_while(|b| !b.starts_with("```"))
                .for_each(drop);
        }
    }
    (steps, files)
}

/// A folder on the PATH holding `splitbrain`, and a scratch folder for the page's files.
fn sandbox(name: &str) -> (PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!("splitbrain-book-{}-{name}", std::process::id()));
    let (bin, scratch) = (root.join("bin"), root.join("scratch"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    let link = bin.join("splitbrain");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_splitbrain"), &link).unwrap();
    (bin, scratch)
}

/// What a step printed, with the scratch folder written back as `/tmp` and what depends on
/// the machine (the `speed` line, the number of worker threads) left out.
fn shown(stdout: &[u8], scratch: &Path) -> String {
    let text = String::from_utf8_lossy(stdout).replace(&format!("{}/", scratch.display()), "/tmp/");
    text.lines()
        .map(|l| {
            if l.starts_with("speed ") {
                return "speed     [machine-dependent]".to_string();
            }
            match l
                .find(" jobs)")
                .or_else(|| l.find(" jobs").filter(|_| l.starts_with("seeds")))
            {
                Some(end) => {
                    let start = l[..end].rfind(' ').unwrap();
                    format!("{}[N]{}", &l[..=start], &l[end..])
                }
                None => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn run_page(file: &str) {
    let page = std::fs::read_to_string(repo().join("docs/book/src").join(file)).unwrap();
    let (steps, files) = steps(&page);
    assert!(!steps.is_empty(), "{file}: no command to run");
    let stem = file.trim_end_matches(".md").replace('/', "-");
    let (bin, scratch) = sandbox(&stem);
    for (name, body) in &files {
        std::fs::write(scratch.join(name), body).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (i, step) in steps.iter().enumerate() {
        let mut line = step
            .line
            .replace("/tmp/", &format!("{}/", scratch.display()));
        for (name, _) in &files {
            line = line.replace(
                &format!(" {name}"),
                &format!(" {}", scratch.join(name).display()),
            );
        }
        let o = Command::new("sh")
            .arg("-c")
            .arg(&line)
            .current_dir(repo())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(step.exit),
            "{file}: `{}` exited {:?}, the page says {}\nstderr: {}",
            step.line,
            o.status.code(),
            step.exit,
            String::from_utf8_lossy(&o.stderr)
        );
        let mut settings = insta::Settings::clone_current();
        settings.set_description(step.line.clone());
        settings.set_snapshot_path(repo().join("crates/cli/tests/book/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| {
            insta::assert_snapshot!(format!("{stem}-{:02}", i + 1), shown(&o.stdout, &scratch));
        });
    }
    let _ = std::fs::remove_dir_all(scratch.parent().unwrap());
}

#[test]
fn the_tutorial_runs_as_written() {
    run_page("tutorial.md");
}

#[test]
fn the_ci_how_to_runs_as_written() {
    run_page("howto-ci.md");
}

#[test]
fn the_redis_how_to_runs_as_written() {
    run_page("howto/redis-lock.md");
}

#[test]
fn the_kubernetes_how_to_runs_as_written() {
    run_page("howto/k8s-leader-election.md");
}

#[test]
fn the_etcd_how_to_runs_as_written() {
    run_page("howto/etcd-lock.md");
}

#[test]
fn the_threshold_how_to_runs_as_written() {
    run_page("howto/threshold.md");
}

#[test]
fn the_cluster_how_to_runs_as_written() {
    run_page("howto/cluster.md");
}

#[test]
fn the_choose_explanation_runs_as_written() {
    run_page("explain/choose.md");
}

#[test]
fn the_lectures_run_as_written() {
    for l in 1..=4 {
        run_page(&format!("teach/lecture-{l}.md"));
    }
}

#[test]
fn the_exercises_page_runs_as_written() {
    run_page("teach/exercises.md");
}

/// The pages under `docs/book/src`, folders included, as paths relative to it.
fn pages(dir: &Path, rel: &str, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = format!("{rel}{}", e.file_name().into_string().unwrap());
        if e.file_type().unwrap().is_dir() {
            pages(&e.path(), &format!("{name}/"), out);
        } else if name.ends_with(".md") {
            out.push(name);
        }
    }
}

#[test]
fn the_own_protocol_guide_runs_as_written() {
    run_page("howto-own-protocol.md");
}

/// Every page with a runnable block is run by a test above: a new page's commands cannot
/// escape the check by being forgotten here.
#[test]
fn every_page_with_commands_is_run() {
    let tested = [
        "tutorial.md",
        "howto-ci.md",
        "howto-own-protocol.md",
        "howto/redis-lock.md",
        "howto/k8s-leader-election.md",
        "howto/etcd-lock.md",
        "howto/threshold.md",
        "howto/cluster.md",
        "explain/choose.md",
        "teach/lecture-1.md",
        "teach/lecture-2.md",
        "teach/lecture-3.md",
        "teach/lecture-4.md",
        "teach/exercises.md",
    ];
    let mut all = Vec::new();
    pages(&repo().join("docs/book/src"), "", &mut all);
    for name in all {
        let page = std::fs::read_to_string(repo().join("docs/book/src").join(&name)).unwrap();
        let runnable = !steps(&page).0.is_empty();
        assert_eq!(runnable, tested.contains(&name.as_str()), "{name}");
    }
}

/// The teacher's pack's exercises (`docs/book/exercises/`): each comes as a starting file and
/// a solution (`NAME.start.json`, `NAME.solution.json`), and `check` finds every one as it
/// expects, so a change of the model that breaks an exercise fails here.
#[test]
fn the_exercises_check_as_they_expect() {
    let dir = repo().join("docs/book/exercises");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 8, "the exercises went missing: {names:?}");
    for n in &names {
        let (stem, kind) = n
            .trim_end_matches(".json")
            .rsplit_once('.')
            .unwrap_or_else(|| panic!("{n}: not NAME.start.json or NAME.solution.json"));
        let twin = match kind {
            "start" => format!("{stem}.solution.json"),
            "solution" => format!("{stem}.start.json"),
            _ => panic!("{n}: not NAME.start.json or NAME.solution.json"),
        };
        assert!(names.contains(&twin), "{n} has no {twin}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args(["check", "docs/book/exercises"])
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The teacher's pack's figures, `docs/book/src/figures/LESSON.png`: each lesson drawn by `run
/// --chart` 1280 px wide (a 16:9 slide) on the lesson's chart window. Compared byte for byte,
/// so a figure cannot show another model than the one that runs; `SPLITBRAIN_UPDATE_REFERENCE=1`
/// redraws them (then look at them).
#[test]
fn the_slide_figures_are_current() {
    const FIGURES: [&str; 7] = [
        "03-bully-partition-split-brain",
        "05-lease-gc-pause-unfenced",
        "06-lease-gc-pause-fenced",
        "12-redlock-gc-pause",
        "14a-redlock-restart-empty",
        "21c-raft-gc-pause-unfenced",
        "21d-raft-gc-pause-fenced",
    ];
    let dir = repo().join("docs/book/src/figures");
    let scratch = tempfile::tempdir().unwrap();
    let update = std::env::var_os("SPLITBRAIN_UPDATE_REFERENCE").is_some();
    let mut stale = Vec::new();
    for f in FIGURES {
        let out = scratch.path().join(format!("{f}.png"));
        let o = Command::new(env!("CARGO_BIN_EXE_splitbrain"))
            .args([
                "run",
                &format!("scenarios/{f}.json"),
                "--width",
                "1280",
                "--chart",
            ])
            .arg(&out)
            .current_dir(repo())
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{f}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let drawn = std::fs::read(&out).unwrap();
        let committed = dir.join(format!("{f}.png"));
        if std::fs::read(&committed).ok().as_deref() != Some(drawn.as_slice()) {
            if update {
                std::fs::write(&committed, &drawn).unwrap();
            } else {
                stale.push(f);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale figures {stale:?}: run `SPLITBRAIN_UPDATE_REFERENCE=1 cargo test -p \
         splitbrain-cli --test cli book` and look at them"
    );
}
