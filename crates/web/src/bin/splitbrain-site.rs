//! Writes the site (`site/build.sh` runs it): `splitbrain-site WASM SCENARIOS_DIR OUT_DIR`.
//!
//! - `OUT/engine.js`: the WebAssembly module (base64, so the pages work from `file://`, where
//!   Chromium fetches nothing) and the code that runs it in a worker;
//! - `OUT/index.html`: the lessons, each with its sentence;
//! - `OUT/lessons/STEM.html`: one page per lesson (`SCENARIOS_DIR/*.json`), which runs the
//!   lesson in the page when opened and on every change.
//!
//! Every text taken from a scenario is escaped in HTML, and embedded in the page as JSON that
//! the page's script reads and shows with `textContent`. The output is a pure function of the
//! inputs (no dates, sorted lessons), so CI can rebuild it and compare with git.
//!
//! Errors (an unreadable file, an invalid lesson) print the scenario error and exit 2.

use base64::Engine as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

static PAGE_JS: &str = include_str!("../../site/page.js");
static PAGE_CSS: &str = include_str!("../../site/page.css");
static ENGINE_JS: &str = include_str!("../../site/engine.js");
static WORKER_JS: &str = include_str!("../../site/worker.js");

/// HTML text escaping (element content and quoted attribute values).
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// JSON for a `<script type="application/json">` element: `<` only occurs inside JSON
/// strings, where `\u003c` means the same, so no `</script>` or `<!--` can end the element.
fn script_json(v: &serde_json::Value) -> String {
    v.to_string().replace('<', "\\u003c")
}

/// A lesson: its file stem, the file's path as the command line names it, its text, name and
/// sentence.
struct Lesson {
    stem: String,
    file: String,
    text: String,
    name: String,
    sentence: String,
}

fn lessons(dir: &Path) -> Result<Vec<Lesson>, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let file = format!(
                "scenarios/{}",
                p.file_name().unwrap_or_default().to_string_lossy()
            );
            let text = splitbrain_scenario::read_scenario(p).map_err(|e| e.to_string())?;
            let plan = splitbrain_scenario::load_str(&file, &text).map_err(|e| e.to_string())?;
            Ok(Lesson {
                stem: p
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                file,
                text,
                name: plan.scenario.name.clone(),
                sentence: plan.scenario.lesson.clone().unwrap_or_default(),
            })
        })
        .collect()
}

fn index_html(lessons: &[Lesson]) -> String {
    let mut rows = String::new();
    for l in lessons {
        rows.push_str(&format!(
            "<li><a href=\"lessons/{}.html\">{}</a> <span class=\"file\">{}</span><br>{}</li>\n",
            escape(&l.stem),
            escape(&l.name),
            escape(&l.file),
            escape(&l.sentence)
        ));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>splitbrain lessons</title>\n<style>\n{PAGE_CSS}</style>\n</head>\n<body class=\"index\">\n\
         <h1>splitbrain lessons, live</h1>\n\
         <p>Each page runs its lesson in the browser with the same engine, protocols and \
         checkers as <code>splitbrain run</code> (the same trace hash for the same file and \
         seed). Change the seed or a knob and it runs again; the link in the address bar \
         reproduces the run.</p>\n<ol class=\"lessons\">\n{rows}</ol>\n</body>\n</html>\n"
    )
}

fn lesson_html(l: &Lesson) -> String {
    let data = serde_json::json!({ "file": l.file, "scenario": l.text });
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title}</title>\n<style>\n{PAGE_CSS}</style>\n</head>\n<body>\n\
         <header>\n<p class=\"nav\"><a href=\"../index.html\">all lessons</a> \
         <span class=\"file\" id=\"file\"></span></p>\n\
         <h1 id=\"title\"></h1>\n<p id=\"lesson\"></p>\n\
         <div id=\"controls\">\
         <label>seed <input id=\"seed\" inputmode=\"numeric\" size=\"22\"></label> \
         <button id=\"run\">run</button> <button id=\"stop\" disabled>stop</button> \
         <button id=\"reset\">back to the lesson</button> \
         <button id=\"copy-command\">copy command</button> \
         <button id=\"copy-scenario\">copy scenario</button> \
         <span id=\"status\"></span></div>\n\
         <p><code id=\"command\"></code></p>\n\
         <p id=\"edited\" hidden></p>\n\
         <p id=\"error\" hidden></p>\n\
         <table id=\"verdicts\"><thead><tr><th>invariant</th><th>expected</th>\
         <th>the lesson's run</th><th>this run</th></tr></thead><tbody></tbody></table>\n\
         <p id=\"hash\"></p>\n\
         <p><button id=\"how-often-run\">how often? run 1,000 seeds</button> \
         <span id=\"how-often-status\"></span></p><pre id=\"how-often\" hidden></pre>\n\
         <details id=\"knobs-box\" open><summary>what if? change a knob (it runs at once)</summary>\
         <div id=\"knobs\"></div></details>\n\
         <details id=\"scenario-box\"><summary>the scenario file</summary>\
         <textarea id=\"scenario\" spellcheck=\"false\" rows=\"24\"></textarea><br>\
         <button id=\"apply\">run the edited scenario</button></details>\n\
         </header>\n\
         <iframe id=\"view\" title=\"the run, step by step\" sandbox=\"allow-scripts\"></iframe>\n\
         <script type=\"application/json\" id=\"lesson-data\">{data}</script>\n\
         <script src=\"../engine.js\"></script>\n<script>\n{PAGE_JS}</script>\n</body>\n</html>\n",
        title = escape(&l.name),
        data = script_json(&data),
    )
}

fn engine_js(wasm: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(wasm);
    let worker = serde_json::Value::String(WORKER_JS.to_string()).to_string();
    ENGINE_JS
        .replace("\"@WASM@\"", &format!("\"{b64}\""))
        .replace("\"@WORKER@\"", &worker)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [wasm, scenarios, out] = args.as_slice() else {
        eprintln!("usage: splitbrain-site WASM SCENARIOS_DIR OUT_DIR");
        return ExitCode::from(2);
    };
    match write_site(Path::new(wasm), Path::new(scenarios), Path::new(out)) {
        Ok(n) => {
            eprintln!("wrote {out}: {n} lessons");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn write_site(wasm: &Path, scenarios: &Path, out: &Path) -> Result<usize, String> {
    let bytes = std::fs::read(wasm).map_err(|e| format!("{}: {e}", wasm.display()))?;
    let lessons = lessons(scenarios)?;
    let write =
        |p: PathBuf, s: String| std::fs::write(&p, s).map_err(|e| format!("{}: {e}", p.display()));
    std::fs::create_dir_all(out.join("lessons")).map_err(|e| e.to_string())?;
    write(out.join("engine.js"), engine_js(&bytes))?;
    write(out.join("index.html"), index_html(&lessons))?;
    for l in &lessons {
        write(
            out.join("lessons").join(format!("{}.html", l.stem)),
            lesson_html(l),
        )?;
    }
    Ok(lessons.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_stays_text() {
        let l = Lesson {
            stem: "x".into(),
            file: "scenarios/x.json".into(),
            text: "{\"name\": \"</script><script>alert(1)</script>\"}".into(),
            name: "<img src=x onerror=alert(1)>".into(),
            sentence: "<script>alert(2)</script> & 'q'".into(),
        };
        let page = lesson_html(&l);
        let index = index_html(std::slice::from_ref(&l));
        for html in [&page, &index] {
            assert!(!html.contains("<img src=x"), "{html}");
            assert!(!html.contains("<script>alert"), "{html}");
        }
        // The scenario's text reaches the page only inside its JSON data element.
        assert_eq!(page.matches("</script>").count(), 3);
        assert!(index.contains("&lt;script&gt;alert(2)&lt;/script&gt; &amp; &#39;q&#39;"));
    }
}
