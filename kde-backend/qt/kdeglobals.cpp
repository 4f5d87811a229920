/* Limen — the kdeglobals reader of the shim.
 *
 * KConfig's file format read with the C++ standard library only: Settings is called the
 * moment a frontend starts, and loading QtCore + KConfigCore for it would cost more idle
 * memory than limen-kde may use before its first dialog. Handles the parts of the format
 * KDE writes into kdeglobals and colour schemes: [Group] and [Group][Sub] headers,
 * [$i] immutability (file and group), key[$e] expansion of $HOME-style variables,
 * localized keys (skipped), and the value escapes (\s \t \n \r \\ \xHH).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-qt.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using Group = std::map<std::string, std::string>;

struct Config {
  std::map<std::string, Group> groups;
  std::set<std::string> immutable_groups;
  bool immutable = false;
};

std::string trim (const std::string &s)
{
  size_t b = s.find_first_not_of (" \t\r");
  if (b == std::string::npos)
    return {};
  size_t e = s.find_last_not_of (" \t\r");
  return s.substr (b, e - b + 1);
}

int hexval (char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string unescape (const std::string &s)
{
  std::string out;
  out.reserve (s.size ());
  for (size_t i = 0; i < s.size (); i++)
    {
      if (s[i] != '\\' || i + 1 == s.size ())
        {
          out += s[i];
          continue;
        }
      char c = s[++i];
      switch (c)
        {
        case 's': out += ' '; break;
        case 't': out += '\t'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case '\\': out += '\\'; break;
        case 'x':
          if (i + 2 < s.size () + 0 && hexval (s[i + 1]) >= 0 && hexval (s[i + 2]) >= 0)
            {
              out += static_cast<char> (hexval (s[i + 1]) * 16 + hexval (s[i + 2]));
              i += 2;
            }
          else
            out += "\\x";
          break;
        default:
          /* "\;" and "\," keep their backslash: they belong to list syntax. */
          out += '\\';
          out += c;
        }
    }
  return out;
}

/* $VAR and ${VAR} as KConfig's [$e] does; $(cmd) is deliberately not run. */
std::string expand (const std::string &s)
{
  std::string out;
  for (size_t i = 0; i < s.size (); i++)
    {
      if (s[i] != '$' || i + 1 == s.size ())
        {
          out += s[i];
          continue;
        }
      std::string name;
      size_t j = i + 1;
      if (s[j] == '{')
        {
          size_t close = s.find ('}', j);
          if (close == std::string::npos)
            {
              out += s[i];
              continue;
            }
          name = s.substr (j + 1, close - j - 1);
          j = close + 1;
        }
      else
        {
          while (j < s.size () && (isalnum (static_cast<unsigned char> (s[j])) || s[j] == '_'))
            j++;
          name = s.substr (i + 1, j - i - 1);
        }
      if (name.empty ())
        {
          out += s[i];
          continue;
        }
      const char *v = getenv (name.c_str ());
      if (v)
        out += v;
      i = j - 1;
    }
  return out;
}

/* Parse one file into @cfg; entries of groups made immutable by earlier files stay. */
void parse_file (const std::string &path, Config &cfg)
{
  std::ifstream in (path);
  if (!in)
    return;
  std::string line, group;
  bool group_locked = false;
  bool file_immutable = false;
  std::set<std::string> seen_groups;
  while (std::getline (in, line))
    {
      std::string t = trim (line);
      if (t.empty () || t[0] == '#')
        continue;
      if (t[0] == '[')
        {
          if (t == "[$i]")
            {
              file_immutable = true;
              continue;
            }
          /* [A][B][$i] → group "A.B", immutable. */
          std::vector<std::string> parts;
          bool locked = false;
          size_t pos = 0;
          while (pos < t.size () && t[pos] == '[')
            {
              size_t close = t.find (']', pos);
              if (close == std::string::npos)
                break;
              std::string part = t.substr (pos + 1, close - pos - 1);
              if (part == "$i")
                locked = true;
              else
                parts.push_back (part);
              pos = close + 1;
            }
          group.clear ();
          for (size_t k = 0; k < parts.size (); k++)
            {
              if (k)
                group += '.';
              group += parts[k];
            }
          group_locked = cfg.immutable_groups.count (group) > 0;
          if ((locked || file_immutable) && !group_locked)
            {
              cfg.immutable_groups.insert (group);
              /* Still read this group's entries from this file. */
            }
          seen_groups.insert (group);
          continue;
        }
      size_t eq = t.find ('=');
      if (eq == std::string::npos || group_locked || group.empty ())
        continue;
      std::string key = trim (t.substr (0, eq));
      std::string value = trim (t.substr (eq + 1));
      bool do_expand = false;
      size_t br = key.find ('[');
      if (br != std::string::npos)
        {
          std::string flags = key.substr (br);
          key = key.substr (0, br);
          /* Localized entries (key[de]) are not what the portal publishes. */
          if (flags.find ('$') == std::string::npos)
            continue;
          do_expand = flags.find ('e') != std::string::npos;
        }
      if (key.empty ())
        continue;
      value = unescape (value);
      if (do_expand)
        value = expand (value);
      cfg.groups[group][key] = value;
    }
  if (file_immutable)
    cfg.immutable = true;
}

std::vector<std::string> split_dirs (const char *env, const char *fallback)
{
  std::vector<std::string> out;
  std::string s = (env && *env) ? env : fallback;
  size_t start = 0;
  while (start <= s.size ())
    {
      size_t colon = s.find (':', start);
      if (colon == std::string::npos)
        colon = s.size ();
      std::string d = s.substr (start, colon - start);
      if (!d.empty () && d[0] == '/')
        out.push_back (d);
      start = colon + 1;
    }
  return out;
}

std::string config_home ()
{
  const char *x = getenv ("XDG_CONFIG_HOME");
  if (x && x[0] == '/')
    return x;
  const char *home = getenv ("HOME");
  return std::string (home ? home : "") + "/.config";
}

std::string data_home ()
{
  const char *x = getenv ("XDG_DATA_HOME");
  if (x && x[0] == '/')
    return x;
  const char *home = getenv ("HOME");
  return std::string (home ? home : "") + "/.local/share";
}

/* Least important first. */
std::vector<std::string> kdeglobals_cascade ()
{
  std::vector<std::string> dirs = split_dirs (getenv ("XDG_CONFIG_DIRS"), "/etc/xdg");
  std::vector<std::string> files;
  for (auto it = dirs.rbegin (); it != dirs.rend (); ++it)
    files.push_back (*it + "/kdeglobals");
  files.push_back (config_home () + "/kdeglobals");
  return files;
}

Config read_kdeglobals ()
{
  Config cfg;
  /* Immutability works from the most important file down, so read system files first
   * and let a system [$i] keep later files from overriding. */
  for (const std::string &f : kdeglobals_cascade ())
    {
      if (cfg.immutable)
        break;
      parse_file (f, cfg);
    }
  return cfg;
}

bool parse_rgb (const std::string &s, double rgb[3])
{
  int r, g, b;
  if (sscanf (s.c_str (), " %d , %d , %d", &r, &g, &b) != 3)
    return false;
  if (r < 0 || r > 255 || g < 0 || g > 255 || b < 0 || b > 255)
    return false;
  rgb[0] = r / 255.0;
  rgb[1] = g / 255.0;
  rgb[2] = b / 255.0;
  return true;
}

double linear (double c)
{
  return c <= 0.04045 ? c / 12.92 : std::pow ((c + 0.055) / 1.055, 2.4);
}

/* WCAG relative luminance. */
double luminance (const double rgb[3])
{
  return 0.2126 * linear (rgb[0]) + 0.7152 * linear (rgb[1]) + 0.0722 * linear (rgb[2]);
}

const std::string *lookup (const Config &cfg, const char *group, const char *key)
{
  auto g = cfg.groups.find (group);
  if (g == cfg.groups.end ())
    return nullptr;
  auto k = g->second.find (key);
  return k == g->second.end () ? nullptr : &k->second;
}

bool find_scheme_file (const std::string &name, std::string &path)
{
  if (name.empty () || name.find ('/') != std::string::npos)
    return false;
  std::vector<std::string> dirs { data_home () };
  for (const std::string &d : split_dirs (getenv ("XDG_DATA_DIRS"), "/usr/local/share:/usr/share"))
    dirs.push_back (d);
  for (const std::string &d : dirs)
    {
      std::string p = d + "/color-schemes/" + name + ".colors";
      std::ifstream f (p);
      if (f)
        {
          path = p;
          return true;
        }
    }
  return false;
}

bool contains_nocase (const std::string &hay, const char *needle)
{
  std::string h, n (needle);
  for (char c : hay)
    h += static_cast<char> (tolower (static_cast<unsigned char> (c)));
  for (char &c : n)
    c = static_cast<char> (tolower (static_cast<unsigned char> (c)));
  return h.find (n) != std::string::npos;
}

} // namespace

extern "C" {

size_t
limen_qt_kdeglobals_foreach (LimenQtConfigEntryFunc func, void *user_data)
{
  Config cfg = read_kdeglobals ();
  size_t n = 0;
  for (const auto &g : cfg.groups)
    for (const auto &e : g.second)
      {
        func (g.first.c_str (), e.first.c_str (), e.second.c_str (), user_data);
        n++;
      }
  return n;
}

void
limen_qt_appearance_read (LimenQtAppearance *out)
{
  memset (out, 0, sizeof *out);
  Config cfg = read_kdeglobals ();
  Config scheme;
  const std::string *scheme_name = lookup (cfg, "General", "ColorScheme");
  std::string scheme_path;
  bool have_scheme = scheme_name && find_scheme_file (*scheme_name, scheme_path);
  if (have_scheme)
    parse_file (scheme_path, scheme);

  /* A colour from kdeglobals (Plasma writes the applied scheme's colours there), else
   * from the scheme file. */
  auto color = [&] (const char *group, const char *key, double rgb[3]) {
    const std::string *v = lookup (cfg, group, key);
    if (v && parse_rgb (*v, rgb))
      return true;
    v = have_scheme ? lookup (scheme, group, key) : nullptr;
    return v && parse_rgb (*v, rgb);
  };

  double bg[3];
  if (color ("Colors:Window", "BackgroundNormal", bg))
    out->color_scheme = luminance (bg) < 0.2 ? LIMEN_QT_COLOR_SCHEME_DARK : LIMEN_QT_COLOR_SCHEME_LIGHT;
  else if (scheme_name && !scheme_name->empty ())
    /* Neither colours nor the scheme file: the name is all we have ("BreezeDark"). */
    out->color_scheme = contains_nocase (*scheme_name, "dark") ? LIMEN_QT_COLOR_SCHEME_DARK
                                                               : LIMEN_QT_COLOR_SCHEME_LIGHT;

  double accent[3];
  const std::string *a = lookup (cfg, "General", "AccentColor");
  if ((a && parse_rgb (*a, accent)) || color ("Colors:Selection", "BackgroundNormal", accent))
    {
      out->has_accent = 1;
      out->accent_r = accent[0];
      out->accent_g = accent[1];
      out->accent_b = accent[2];
    }

  double vbg[3], vfg[3];
  if ((color ("Colors:View", "BackgroundNormal", vbg) && color ("Colors:View", "ForegroundNormal", vfg))
      || (color ("Colors:Window", "BackgroundNormal", vbg) && color ("Colors:Window", "ForegroundNormal", vfg)))
    {
      double l1 = luminance (vbg), l2 = luminance (vfg);
      double ratio = (std::max (l1, l2) + 0.05) / (std::min (l1, l2) + 0.05);
      /* Breeze (light and dark) sits near 14:1; only near black-on-white schemes pass. */
      out->high_contrast = ratio >= 18.0;
    }
  if (scheme_name && contains_nocase (*scheme_name, "contrast"))
    out->high_contrast = 1;

  const std::string *anim = lookup (cfg, "KDE", "AnimationDurationFactor");
  if (anim)
    {
      char *end = nullptr;
      double f = strtod (anim->c_str (), &end);
      out->reduced_motion = end != anim->c_str () && f <= 0.0;
    }
}

char **
limen_qt_kdeglobals_paths (void)
{
  std::vector<std::string> files = kdeglobals_cascade ();
  char **out = static_cast<char **> (calloc (files.size () + 1, sizeof (char *)));
  if (!out)
    return nullptr;
  for (size_t i = 0; i < files.size (); i++)
    out[i] = strdup (files[i].c_str ());
  return out;
}

void
limen_qt_strv_free (char **strv)
{
  if (!strv)
    return;
  for (char **p = strv; *p; p++)
    free (*p);
  free (strv);
}

} // extern "C"
