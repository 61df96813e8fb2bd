//! The crate's layers, enforced: every `use crate::X` (or `crate::X::…`
//! path) in `src/` names a module of a lower layer than its own, so no
//! module imports one above it, and no clap type leaves `cli` (only
//! `options` and `main` import it). Doc comments do not count.

use std::path::Path;

/// Bottom to top. A module may use modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    &["escape", "units"],
    &["cpuset", "input"],
    &["affinity"],
    &["probe"],
    &["plan"],
    &["measure"],
    &["judge"],
    &["saved", "exit"],
    &["fleet"],
    &["report"],
    &["study"],
    &["commands"],
    &["cli"],
    &["options"],
];

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or_else(|| panic!("module '{module}' has no layer in tests/layering.rs"))
}

/// The top-level module a source file belongs to (`src/judge/gate.rs` → judge).
fn module_of(file: &Path, src: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn source_files(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            source_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn no_module_imports_one_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let module = module_of(file, &src);
        if module == "main" || module == "lib" {
            continue;
        }
        let own = layer_of(&module);
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for (at, _) in code.match_indices("crate::") {
                let used: String = code[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if used.is_empty() || used == module {
                    continue;
                }
                if layer_of(&used) >= own {
                    violations.push(format!(
                        "{}:{}: {module} uses crate::{used}",
                        file.strip_prefix(&src).unwrap().display(),
                        number + 1
                    ));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports pointing up:\n{}",
        violations.join("\n")
    );
}

// ---------------------------------------------------------------------------
// File-level import circles.
//
// Every file of `src/` is a node. A file points at another when its code
// names an item defined there: through a `use` (of the item, of a module it
// then walks, or a glob), or by a full path in code
// (`crate::report::figure::hybrid::figure(self)`, `super::x::f()`, a child
// module's `child::f()`). A re-export (`pub use`) is followed to the file that
// defines the item, and is no edge of its own unless the file's code uses the
// name. Two files in one strongly connected component import each other,
// directly or through others: that is a circle.

/// Circles accepted for now: each entry is one circle's files, sorted,
/// relative to `src/`. None is: the list stays, so that one accepted
/// circle is a reviewed line, and an entry that no longer matches a circle
/// fails the test too, so the list cannot go stale.
const KNOWN_CIRCLES: &[&[&str]] = &[];

use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Path,
    Punct(char),
}

/// The code of a Rust file as tokens with line numbers: comments, string and
/// character literals dropped (a `crate::` in a string is no import).
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let count_lines = |from: usize, to: usize, line: &mut usize| {
        *line += chars[from..to].iter().filter(|&&c| c == '\n').count();
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let start = i;
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            count_lines(start, i.min(chars.len()), &mut line);
        } else if c == '"' || (c == 'b' && next == Some('"')) {
            let start = i;
            i += if c == 'b' { 2 } else { 1 };
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            count_lines(start, i.min(chars.len()), &mut line);
        } else if (c == 'r' || (c == 'b' && next == Some('r'))) && {
            let at = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[at.min(chars.len())..]
                .iter()
                .take_while(|&&h| h == '#')
                .count();
            chars.get(at + hashes) == Some(&'"') && (i == 0 || !is_ident_char(chars[i - 1]))
        } {
            let start = i;
            let at = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[at..].iter().take_while(|&&h| h == '#').count();
            i = at + hashes + 1;
            let closing: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            while i < chars.len() && !chars[i..].starts_with(&closing) {
                i += 1;
            }
            i += closing.len();
            count_lines(start, i.min(chars.len()), &mut line);
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < chars.len() && is_ident_char(chars[i]) {
                    i += 1;
                }
            }
        } else if is_ident_char(c) && !c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && is_ident_char(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            out.push((Tok::Ident(word.trim_start_matches("r#").to_string()), line));
        } else if c.is_ascii_digit() {
            while i < chars.len() && (is_ident_char(chars[i]) || chars[i] == '.') {
                if chars[i] == '.' && chars.get(i + 1).is_some_and(|d| !d.is_ascii_digit()) {
                    break;
                }
                i += 1;
            }
        } else if c == ':' && next == Some(':') {
            out.push((Tok::Path, line));
            i += 2;
        } else if c.is_whitespace() {
            i += 1;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// What a name in a file's scope stands for.
#[derive(Clone, Debug)]
enum Target {
    /// A module (its path from the crate root).
    Module(Vec<String>),
    /// An item defined in a file (its index).
    Item(usize),
}

/// A `use` binding: the name bound, the path it names, whether it is a
/// glob, and the line.
#[derive(Clone, Debug)]
struct UseEntry {
    path: Vec<String>,
    alias: Option<String>,
    glob: bool,
    /// Inline module depth at the `use` (`super` there is one step less).
    depth: usize,
}

struct SourceFile {
    relative: String,
    module: Vec<String>,
    tokens: Vec<(Tok, usize)>,
    /// Names of items defined in the file (functions, types, constants, …).
    items: BTreeSet<String>,
    uses: Vec<UseEntry>,
    /// Token ranges of `use` declarations (not code).
    use_ranges: Vec<(usize, usize)>,
    /// Token ranges of `#[cfg(test)]` inline modules (not counted).
    test_ranges: Vec<(usize, usize)>,
    /// Inline module depth of each token.
    depth: Vec<usize>,
}

fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_string());
    }
    parts
}

/// Parses one use tree at `i`, pushing every leaf path.
fn use_tree(
    toks: &[(Tok, usize)],
    i: &mut usize,
    prefix: &[String],
    depth: usize,
    out: &mut Vec<UseEntry>,
) {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(*i).map(|t| &t.0) {
            Some(Tok::Path) => *i += 1,
            Some(Tok::Ident(word)) => {
                path.push(word.clone());
                *i += 1;
                if let Some(Tok::Ident(kw)) = toks.get(*i).map(|t| &t.0) {
                    if kw == "as" {
                        let alias = match toks.get(*i + 1).map(|t| &t.0) {
                            Some(Tok::Ident(a)) => a.clone(),
                            _ => String::new(),
                        };
                        *i += 2;
                        out.push(UseEntry {
                            path,
                            alias: Some(alias),
                            glob: false,
                            depth,
                        });
                        return;
                    }
                }
                if toks.get(*i).map(|t| &t.0) != Some(&Tok::Path) {
                    out.push(UseEntry {
                        path,
                        alias: None,
                        glob: false,
                        depth,
                    });
                    return;
                }
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
                out.push(UseEntry {
                    path,
                    alias: None,
                    glob: true,
                    depth,
                });
                return;
            }
            Some(Tok::Punct('{')) => {
                *i += 1;
                loop {
                    match toks.get(*i).map(|t| &t.0) {
                        Some(Tok::Punct('}')) | None => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Punct(',')) => *i += 1,
                        _ => use_tree(toks, i, &path, depth, out),
                    }
                }
            }
            _ => return,
        }
    }
}

fn parse_file(src: &Path, file: &Path) -> SourceFile {
    let relative_path = file.strip_prefix(src).unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    let toks = tokens(&text);
    let mut items = BTreeSet::new();
    let mut uses = Vec::new();
    let mut use_ranges = Vec::new();
    let mut depth = vec![0; toks.len()];
    // Inline modules: the brace depth at which each one opened.
    let mut inline: Vec<usize> = Vec::new();
    let mut braces = 0usize;
    // `#[cfg(test)]` inline modules: their opening brace depths, and the
    // token ranges they cover.
    let mut test_modules: Vec<usize> = Vec::new();
    let mut test_ranges = Vec::new();
    let mut test_start = None;
    let mut i = 0;
    while i < toks.len() {
        depth[i] = inline.len();
        if !test_modules.is_empty() && test_start.is_none() {
            test_start = Some(i);
        }
        match &toks[i].0 {
            Tok::Punct('{') => braces += 1,
            Tok::Punct('}') => {
                braces = braces.saturating_sub(1);
                if inline.last() == Some(&braces) {
                    inline.pop();
                }
                if test_modules.last() == Some(&braces) {
                    test_modules.pop();
                    test_ranges.push((test_start.take().unwrap_or(i), i));
                }
            }
            Tok::Ident(word) => {
                let prev_path = i > 0 && toks[i - 1].0 == Tok::Path;
                let name = match toks.get(i + 1).map(|t| &t.0) {
                    Some(Tok::Ident(name)) => Some(name.clone()),
                    _ => None,
                };
                match word.as_str() {
                    "use" if !prev_path => {
                        let start = i;
                        i += 1;
                        let level = inline.len();
                        use_tree(&toks, &mut i, &[], level, &mut uses);
                        while i < toks.len() && toks[i].0 != Tok::Punct(';') {
                            i += 1;
                        }
                        for d in &mut depth[start..i.min(toks.len())] {
                            *d = level;
                        }
                        use_ranges.push((start, i));
                        continue;
                    }
                    "mod" => {
                        if let Some(name) = name {
                            items.insert(name);
                            if toks.get(i + 2).map(|t| &t.0) == Some(&Tok::Punct('{')) {
                                // `#[cfg(test)] mod tests { … }`: a module of its
                                // own that nothing imports, so never in a circle.
                                let before = &toks[i.saturating_sub(8)..i];
                                if before.windows(4).any(|w| {
                                    w[0].0 == Tok::Ident("cfg".into())
                                        && w[1].0 == Tok::Punct('(')
                                        && w[2].0 == Tok::Ident("test".into())
                                        && w[3].0 == Tok::Punct(')')
                                }) {
                                    test_modules.push(braces);
                                }
                                inline.push(braces);
                                braces += 1;
                                depth[i] = inline.len();
                                i += 3;
                                continue;
                            }
                        }
                    }
                    "fn" | "struct" | "enum" | "const" | "static" | "type" | "trait" | "union" => {
                        if let Some(name) = name {
                            items.insert(name);
                        }
                    }
                    "macro_rules" => {
                        if let Some(Tok::Ident(name)) = toks.get(i + 2).map(|t| &t.0) {
                            items.insert(name.clone());
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        i += 1;
    }
    SourceFile {
        relative: relative_path.display().to_string(),
        module: module_path(relative_path),
        tokens: toks,
        items,
        uses,
        use_ranges,
        test_ranges,
        depth,
    }
}

struct Crate {
    files: Vec<SourceFile>,
    by_module: BTreeMap<Vec<String>, usize>,
}

impl Crate {
    fn load(src: &Path) -> Crate {
        let mut paths = Vec::new();
        source_files(src, &mut paths);
        paths.sort();
        let files: Vec<SourceFile> = paths
            .iter()
            .filter(|p| p.file_name().is_some_and(|n| n != "main.rs"))
            .map(|p| parse_file(src, p))
            .collect();
        let by_module = files
            .iter()
            .enumerate()
            .map(|(at, f)| (f.module.clone(), at))
            .collect();
        Crate { files, by_module }
    }

    /// Where `name`, looked up in module `module`, is defined.
    fn lookup(
        &self,
        module: &[String],
        name: &str,
        seen: &mut BTreeSet<(Vec<String>, String)>,
    ) -> Option<Target> {
        if !seen.insert((module.to_vec(), name.to_string())) {
            return None;
        }
        let mut child = module.to_vec();
        child.push(name.to_string());
        if self.by_module.contains_key(&child) {
            return Some(Target::Module(child));
        }
        let &at = self.by_module.get(module)?;
        let file = &self.files[at];
        if file.items.contains(name) {
            return Some(Target::Item(at));
        }
        for entry in file.uses.iter().filter(|u| u.depth == 0) {
            let bound = entry
                .alias
                .as_deref()
                .or(entry.path.last().map(String::as_str));
            if !entry.glob && bound == Some(name) {
                return self.resolve(at, &entry.path, 0, seen);
            }
        }
        for entry in file.uses.iter().filter(|u| u.depth == 0 && u.glob) {
            if let Some(Target::Module(glob)) = self.resolve(at, &entry.path, 0, seen) {
                if let Some(found) = self.lookup(&glob, name, seen) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// Resolves a path written in file `at` (at inline depth `depth`): a
    /// bare first segment is a child module, an item of the file, or a name
    /// the file's module has in scope.
    fn resolve(
        &self,
        at: usize,
        path: &[String],
        depth: usize,
        seen: &mut BTreeSet<(Vec<String>, String)>,
    ) -> Option<Target> {
        let file = &self.files[at];
        let mut segments = path.iter();
        let first = segments.next()?;
        let mut module: Vec<String> = match first.as_str() {
            "crate" => Vec::new(),
            "self" => file.module.clone(),
            "super" => {
                let mut m = file.module.clone();
                if depth == 0 {
                    m.pop();
                }
                m
            }
            name => {
                if depth == 0
                    && file.items.contains(name)
                    && !self
                        .by_module
                        .contains_key(&[file.module.clone(), vec![name.to_string()]].concat())
                {
                    return Some(Target::Item(at));
                }
                match self.lookup(&file.module, name, seen) {
                    Some(Target::Module(m)) => m,
                    other => return other,
                }
            }
        };
        for segment in segments {
            match segment.as_str() {
                "super" => {
                    module.pop();
                }
                "self" => {}
                name => match self.lookup(&module, name, seen)? {
                    Target::Module(m) => module = m,
                    item => return Some(item),
                },
            }
        }
        Some(Target::Module(module))
    }

    /// Every edge: (from, to, line).
    fn edges(&self) -> BTreeMap<(usize, usize), usize> {
        let mut edges = BTreeMap::new();
        for (at, file) in self.files.iter().enumerate() {
            let in_use = |i: usize| {
                file.use_ranges
                    .iter()
                    .chain(&file.test_ranges)
                    .any(|&(s, e)| s <= i && i < e)
            };
            let toks = &file.tokens;
            // Names bound by this file's `use`s, and its glob modules.
            let mut bound: BTreeMap<String, Vec<String>> = BTreeMap::new();
            let mut globs: Vec<Vec<String>> = Vec::new();
            for entry in &file.uses {
                let mut seen = BTreeSet::new();
                match self.resolve(at, &entry.path, entry.depth, &mut seen) {
                    Some(Target::Module(m)) if entry.glob => globs.push(m),
                    _ if entry.glob => {}
                    _ => {
                        let name = entry
                            .alias
                            .clone()
                            .or_else(|| entry.path.last().cloned())
                            .unwrap_or_default();
                        let path = if entry.path.first().is_some_and(|s| s == "super")
                            && entry.depth > 0
                        {
                            // `super` in an inline module is this file's module.
                            let mut p = vec!["self".to_string()];
                            p.extend(entry.path[1..].iter().cloned());
                            p
                        } else {
                            entry.path.clone()
                        };
                        bound.insert(name, path);
                    }
                }
            }
            // Names the file binds as locals, parameters or fields: a
            // lowercase imported name spelled alike is one of those unless
            // it is called or walked (`name(`, `name!`, `name::`).
            let locals: BTreeSet<&str> = (0..toks.len())
                .filter_map(|i| {
                    let Tok::Ident(word) = &toks[i].0 else {
                        return None;
                    };
                    let before = |back: usize| i.checked_sub(back).map(|at| &toks[at].0);
                    let binding = matches!(before(1), Some(Tok::Ident(k)) if k == "let" || k == "mut")
                        || (before(1) == Some(&Tok::Punct('('))
                            && matches!(before(2), Some(Tok::Ident(k)) if k == "Some" || k == "Ok" || k == "Err"))
                        || (toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Punct(':'))
                            && toks.get(i + 2).map(|t| &t.0) != Some(&Tok::Punct(':')));
                    binding.then_some(word.as_str())
                })
                .collect();
            let mut i = 0;
            while i < toks.len() {
                let Tok::Ident(word) = &toks[i].0 else {
                    i += 1;
                    continue;
                };
                let after_path = i > 0
                    && (matches!(toks[i - 1].0, Tok::Path | Tok::Punct('.'))
                        || toks[i - 1].0 == Tok::Ident("mod".into()));
                if in_use(i) || after_path {
                    i += 1;
                    continue;
                }
                // The whole path starting here.
                let mut path = vec![word.clone()];
                let mut j = i + 1;
                while toks.get(j).map(|t| &t.0) == Some(&Tok::Path) {
                    match toks.get(j + 1).map(|t| &t.0) {
                        Some(Tok::Ident(next)) => {
                            path.push(next.clone());
                            j += 2;
                        }
                        _ => break,
                    }
                }
                let line = toks[i].1;
                let mut seen = BTreeSet::new();
                let called = matches!(
                    toks.get(i + 1).map(|t| &t.0),
                    Some(Tok::Path | Tok::Punct('(' | '!'))
                );
                let local = word.starts_with(|c: char| c.is_ascii_lowercase())
                    && locals.contains(word.as_str())
                    && !called;
                let target = if local {
                    None
                } else if let Some(full) = bound.get(word) {
                    let mut p = full.clone();
                    p.extend(path[1..].iter().cloned());
                    self.resolve(at, &p, 0, &mut seen)
                } else if path.len() > 1 || ["crate", "super", "self"].contains(&word.as_str()) {
                    self.resolve(at, &path, file.depth[i], &mut seen)
                } else if !file.items.contains(word)
                    && (word.starts_with(|c: char| c.is_ascii_uppercase())
                        || matches!(toks.get(j).map(|t| &t.0), Some(Tok::Punct('(' | '!'))))
                    && !matches!(i.checked_sub(1).map(|p| &toks[p].0), Some(Tok::Ident(k)) if k == "fn" || k == "let")
                {
                    globs
                        .iter()
                        .find_map(|glob| self.lookup(glob, word, &mut seen))
                } else {
                    None
                };
                if let Some(Target::Item(to)) = target {
                    if to != at {
                        edges.entry((at, to)).or_insert(line);
                    }
                }
                i = j.max(i + 1);
            }
        }
        edges
    }
}

/// Strongly connected components of more than one file (Tarjan).
fn circles(count: usize, edges: &BTreeMap<(usize, usize), usize>) -> Vec<Vec<usize>> {
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); count];
    for &(from, to) in edges.keys() {
        next[from].push(to);
    }
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, next: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.counter);
        s.low[v] = s.counter;
        s.counter += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &next[v] {
            match s.index[w] {
                None => {
                    visit(w, next, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(index) if s.on_stack[w] => s.low[v] = s.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort_unstable();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        index: vec![None; count],
        low: vec![0; count],
        on_stack: vec![false; count],
        stack: Vec::new(),
        counter: 0,
        out: Vec::new(),
    };
    for v in 0..count {
        if state.index[v].is_none() {
            visit(v, &next, &mut state);
        }
    }
    state.out.sort();
    state.out
}

#[test]
fn no_two_files_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let krate = Crate::load(&src);
    let edges = krate.edges();
    let found = circles(krate.files.len(), &edges);
    let names = |component: &[usize]| -> Vec<String> {
        component
            .iter()
            .map(|&f| krate.files[f].relative.clone())
            .collect()
    };
    let known: Vec<Vec<String>> = KNOWN_CIRCLES
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let mut report = Vec::new();
    for component in &found {
        let files = names(component);
        if known.contains(&files) {
            continue;
        }
        let mut lines = vec![format!("circle: {}", files.join(" ↔ "))];
        for (&(from, to), line) in &edges {
            if component.contains(&from) && component.contains(&to) {
                lines.push(format!(
                    "    {}:{line} uses {}",
                    krate.files[from].relative, krate.files[to].relative
                ));
            }
        }
        report.push(lines.join("\n"));
    }
    let found_names: Vec<Vec<String>> = found.iter().map(|c| names(c)).collect();
    for stale in known.iter().filter(|k| !found_names.contains(k)) {
        report.push(format!(
            "KNOWN_CIRCLES lists {:?}, which is no circle any more: remove it",
            stale
        ));
    }
    assert!(
        report.is_empty(),
        "{} file-level import circles:\n{}",
        report.len(),
        report.join("\n")
    );
}

/// The circle finder finds a circle made by a `use` one way and a full path
/// in code the other, through a re-export and a glob, and none where a file
/// only names a lower one.
#[test]
fn circle_finder_sees_uses_paths_and_globs() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n");
    write("a.rs", "use crate::b::B;\npub struct A(B);\n");
    write(
        "b.rs",
        "// crate::c::C in a comment is no import\npub struct B;\nfn f() { crate::a::helper::A; }\n",
    );
    write("a/helper.rs", "");
    write("c.rs", "pub use crate::d::*;\npub struct C;\n");
    write(
        "d.rs",
        "use crate::c::*;\npub fn d() { let _ = \"crate::c::C\"; }\n",
    );
    let krate = Crate::load(src);
    let edges = krate.edges();
    let found: Vec<Vec<String>> = circles(krate.files.len(), &edges)
        .iter()
        .map(|c| c.iter().map(|&f| krate.files[f].relative.clone()).collect())
        .collect();
    // None yet: b names `crate::a::helper::A`, a module path that does
    // not reach a.rs's items; c only re-exports d; the paths in the comment
    // and the string are no imports.
    assert!(found.is_empty(), "{found:?}");
    write("b.rs", "pub struct B;\nfn f() -> crate::a::A { todo!() }\n");
    write(
        "c.rs",
        "use crate::d::*;\npub struct C;\nfn g() {\n    d();\n}\n",
    );
    write("d.rs", "use crate::c::*;\npub fn d() -> C {\n    C\n}\n");
    let krate = Crate::load(src);
    let found: Vec<Vec<String>> = circles(krate.files.len(), &krate.edges())
        .iter()
        .map(|c| c.iter().map(|&f| krate.files[f].relative.clone()).collect())
        .collect();
    assert_eq!(found, [vec!["a.rs", "b.rs"], vec!["c.rs", "d.rs"]]);
}

/// No source file is over 900 lines before its tests (the first
/// `#[cfg(test)]` at the start of a line, or the end).
#[test]
fn no_file_is_over_900_lines_before_its_tests() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let lines = text
                .lines()
                .position(|line| line.starts_with("#[cfg(test)]"))
                .unwrap_or(text.lines().count());
            (lines > 900)
                .then(|| format!("{}: {lines}", file.strip_prefix(&src).unwrap().display()))
        })
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "over 900 lines before their tests:\n{}",
        long.join("\n")
    );
}
