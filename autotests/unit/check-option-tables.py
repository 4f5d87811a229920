"""One option, one table, one limit, in both daemons (DESIGN.md: option tables).

Fails, naming the place, when
  1. a table declared in a src/core header (extern const LimenOption NAME[]) is used by no
     daemon (src/portal, kde-backend, document-fuse): a table written for a method that
     nobody checks against means a daemon checks that method some other way;
  2. limen-kde defines an option table or an option validator of its own, or calls a
     validator (limen_validate_*) outside a table: the backend checks what a frontend sends
     with the tables the frontend checks an app with;
  3. a daemon defines its own check of an option or argument that src/core checks
     (parent_window, restore_data);
  4. a frontend portal file keeps a local table with a key that a core table of the same
     portal also checks (the handle tokens, which the frontend consumes, aside).
Usage: check-option-tables.py SOURCE_DIR"""
import pathlib
import re
import sys

DAEMON_DIRS = ("src/portal", "kde-backend", "document-fuse")
TOKENS = {"handle_token", "session_handle_token"}
CORE_CHECKS = re.compile(r"^(\w*(?:check|valid)\w*(?:parent_window|restore_data)\w*"
                         r"|\w*(?:parent_window|restore_data)\w*(?:check|valid)\w*)\s*\(", re.M)
TABLE_DEF = re.compile(r"LimenOption\s+(\w+)\s*\[\s*\]\s*=\s*\{(.*?)\n\s*\};", re.S)
VALIDATOR_DEF = re.compile(r"^(\w+)\s*\(\s*const\s+LimenOption\s*\*[^;]*?\)\s*\{", re.M)
VALIDATE_CALL = re.compile(r"\b(limen_validate_\w+)\s*\(")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def sources(top, subdir):
    base = top / subdir
    for path in sorted(base.rglob("*.c")):
        if "qt" in path.relative_to(base).parts[:1]:
            continue   # the shim never sees an option dict
        yield path


def table_keys(body):
    return set(re.findall(r'\{\s*"([^"]+)"', body))


def core_tables(top):
    """name → set of keys, for every table src/core exports (macro rows count too)."""
    text = "".join(strip_comments(p.read_text()) for p in sorted((top / "src/core").glob("*.c")))
    macros = {m.group(1): m.group(2) for m in
              re.finditer(r"#define\s+(\w+)\s*((?:[^\n]*\\\n)*[^\n]*)", text)}
    declared = set()
    for header in sorted((top / "src/core").glob("*.h")):
        declared |= set(re.findall(r"extern\s+const\s+LimenOption\s+(\w+)\s*\[\s*\]\s*;", header.read_text()))
    tables = {}
    for m in TABLE_DEF.finditer(text):
        body = m.group(2)
        for word in re.findall(r"\b[A-Z][A-Z0-9_]+\b", body):
            body += macros.get(word, "")
        tables[m.group(1)] = table_keys(body)
    return {name: tables.get(name, set()) for name in declared}


def main(top):
    top = pathlib.Path(top)
    problems = []
    tables = core_tables(top)
    texts = {p: strip_comments(p.read_text()) for d in DAEMON_DIRS for p in sources(top, d)}
    rel = lambda p: str(p.relative_to(top))

    used = set()
    for text in texts.values():
        used |= set(re.findall(r"\b\w+\b", text)) & tables.keys()
    for name in sorted(tables.keys() - used):
        problems.append(f"{name}: a core option table that no daemon checks against")

    for path, text in texts.items():
        in_kde = rel(path).startswith("kde-backend/")
        for m in TABLE_DEF.finditer(text):
            if in_kde:
                problems.append(f"{rel(path)}: option table {m.group(1)} of its own (use a src/core table)")
        if in_kde:
            for m in VALIDATOR_DEF.finditer(text):
                problems.append(f"{rel(path)}: option validator {m.group(1)} of its own (belongs in src/core)")
            for m in VALIDATE_CALL.finditer(text):
                problems.append(f"{rel(path)}: calls {m.group(1)} outside a table")
        for m in CORE_CHECKS.finditer(text):
            problems.append(f"{rel(path)}: {m.group(1)} checks what src/core checks")

    for path, text in texts.items():
        if not rel(path).startswith("src/portal/portals/"):
            continue
        portal = path.stem.replace("-", "_")
        mine = {k for name, keys in tables.items()
                if re.match(rf"limen_options_(impl_)?{portal}_", name) for k in keys}
        for m in TABLE_DEF.finditer(text):
            for key in sorted((table_keys(m.group(2)) & mine) - TOKENS):
                problems.append(f"{rel(path)}: table {m.group(1)} checks {key}, which a core table "
                                f"of the same portal checks too")

    for p in problems:
        print(p)
    print(f"{len(tables)} core tables, {len(texts)} daemon sources, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
