"""Every user-visible string in the generated limen.pot has a German translation that
is neither missing nor fuzzy, and the catalog compiles. Usage: check-translations.py POT PO"""
import subprocess
import sys


def entries(path):
    """msgid → (msgstr, fuzzy) for a .po/.pot file (plural forms: first msgstr)."""
    out, cur, fuzzy, field = {}, {}, False, None
    def flush():
        if "msgid" in cur and cur["msgid"]:
            key = (cur.get("msgctxt"), cur["msgid"])
            out[key] = (cur.get("msgstr", "") or cur.get("msgstr[0]", ""), fuzzy)
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                flush(); cur, fuzzy, field = {}, False, None
                continue
            if line.startswith("#,") and "fuzzy" in line:
                fuzzy = True
            if line.startswith("#"):
                continue
            if line.startswith('"'):
                cur[field] += eval(line)
                continue
            key, _, rest = line.partition(" ")
            field = key
            cur[field] = eval(rest)
    flush()
    return out


pot, po = sys.argv[1], sys.argv[2]
subprocess.run(["msgfmt", "--check", "-o", "/dev/null", po], check=True)
wanted = entries(pot)
have = entries(po)
missing = [k for k in wanted if k not in have or not have[k][0] or have[k][1]]
for ctx, msgid in missing:
    print(f"untranslated in {po}: {msgid!r}" + (f" (context {ctx!r})" if ctx else ""))
print(f"{len(wanted) - len(missing)} passed, {len(missing)} failed")
sys.exit(1 if missing else 0)
