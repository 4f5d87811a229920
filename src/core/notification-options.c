/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A markup-body is HTML-like text from an app that a notification server renders. It must
 * be well-formed (as the reference requires; "a & b" or crossed tags are refused with the
 * parser's words); the scanner below then keeps only the specification's three tags, links
 * only to web pages and mail addresses (never javascript:, file: or data:) and whitespace as
 * markup has it, and what comes out is always well-formed. */
#include "notification-options.h"

#include <string.h>

#include "errors.h"

#define MARKUP_DEPTH_MAX 32
#define HREF_MAX 2048
#define DISPLAY_HINTS_MAX 16
#define LABEL_MAX 256
#define TARGET_MAX 4096
#define VENDOR_NAME_MAX 255

const char * const limen_notification_categories[] = {
  "im.received", "alarm.ringing", "call.incoming", "call.ongoing", "call.unanswered",
  "weather.warning.extreme", "cellbroadcast.danger.presidential", "cellbroadcast.danger.extreme",
  "cellbroadcast.danger.severe", "cellbroadcast.public-safety", "cellbroadcast.amber-alert",
  "cellbroadcast.test", "os.battery.low", "browser.web-notification",
  NULL
};

const char * const limen_notification_display_hints[] = {
  "transient", "tray", "persistent", "hide-on-lockscreen", "hide-content-on-lockscreen", "show-as-new",
  NULL
};

/* An app's value as an error message shows it: at most 64 bytes of it. */
static char *
shown_value (const char *value)
{
  return g_utf8_make_valid (value, MIN (strlen (value), 64));
}

/* xdg-desktop-portal 1.19's frontend spells the lock-screen hints with a hyphen. */
static const char *
display_hint_canonical (const char *hint)
{
  return g_str_equal (hint, "hide-on-lock-screen") ? "hide-on-lockscreen"
       : g_str_equal (hint, "hide-content-on-lock-screen") ? "hide-content-on-lockscreen"
       : hint;
}

const char * const limen_notification_button_purposes[] = {
  "im.reply-with-text", "call.accept", "call.decline", "call.hang-up", "call.enable-speakerphone",
  "call.disable-speakerphone", "system.custom-alert",
  NULL
};

/* Tags kept, as the stack stores them. */
enum { TAG_B = 'b', TAG_I = 'i', TAG_A = 'a' };

typedef struct {
  GString *out;
  char     stack[MARKUP_DEPTH_MAX];
  guint    depth;
  gboolean any_text;       /* text came out already */
  gboolean pending_space;  /* whitespace since then, written out before the next text */
} Sanitizer;

static gboolean
xml_char_ok (gunichar c)
{
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

/* Length of a well-formed entity reference at @p ("&amp;", "&#233;", "&#xE9;"), or 0. */
static gsize
entity_length (const char *p)
{
  static const char *const named[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
  const char *q;
  guint64 value = 0;
  gboolean hex;

  for (guint i = 0; i < G_N_ELEMENTS (named); i++)
    if (g_str_has_prefix (p, named[i]))
      return strlen (named[i]);
  if (p[1] != '#')
    return 0;
  hex = p[2] == 'x';
  q = p + (hex ? 3 : 2);
  for (const char *d = q; ; d++)
    {
      if (*d == ';')
        return d > q && xml_char_ok ((gunichar) value) ? (gsize) (d - p + 1) : 0;
      if (d - q >= 7 || !(hex ? g_ascii_isxdigit (*d) : g_ascii_isdigit (*d)))
        return 0;
      value = value * (hex ? 16 : 10) + (hex ? (guint) g_ascii_xdigit_value (*d) : (guint) (*d - '0'));
    }
}

/* Whitespace held back (see put_text_char) goes out before text or a tag. */
static void
flush_space (Sanitizer *s)
{
  if (s->pending_space)
    g_string_append_c (s->out, ' ');
  s->pending_space = FALSE;
}

/* One character of text at @p; returns how many bytes it took. Whitespace is markup's, not
 * layout: a run of it is one space, none at the start or the end (as the reference has it). */
static gsize
put_text_char (Sanitizer *s, const char *p)
{
  gunichar c;
  gsize n;

  if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    {
      s->pending_space = s->any_text;
      return 1;
    }
  flush_space (s);
  s->any_text = TRUE;
  if (*p == '&')
    {
      n = entity_length (p);
      if (n > 0)
        g_string_append_len (s->out, p, n);
      else
        g_string_append (s->out, "&amp;");
      return n > 0 ? n : 1;
    }
  if (*p == '<' || *p == '>')
    {
      g_string_append (s->out, *p == '<' ? "&lt;" : "&gt;");
      return 1;
    }
  c = g_utf8_get_char (p);
  n = g_utf8_next_char (p) - p;
  /* Characters XML cannot hold (NUL aside, which a D-Bus string never has) are dropped. */
  if (xml_char_ok (c))
    g_string_append_len (s->out, p, n);
  return n;
}

static gboolean
is_name_char (char c)
{
  return g_ascii_isalnum (c) || c == '-' || c == '_' || c == ':' || c == '.';
}

/* An attribute value with its entities decoded, for judging a link; NULL if malformed. */
static char *
decode_value (const char *start, gsize len)
{
  g_autoptr(GString) v = g_string_sized_new (len);

  for (gsize i = 0; i < len; )
    {
      gsize n = start[i] == '&' ? entity_length (start + i) : 0;

      if (n == 0)
        {
          g_string_append_c (v, start[i++]);
          continue;
        }
      if (start[i + 1] == '#')
        {
          gboolean hex = start[i + 2] == 'x';
          guint64 c = g_ascii_strtoull (start + i + (hex ? 3 : 2), NULL, hex ? 16 : 10);

          g_string_append_unichar (v, (gunichar) c);
        }
      else
        {
          static const struct { const char *e; char c; } map[] = {
            { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' }, { "&apos;", '\'' } };

          for (guint k = 0; k < G_N_ELEMENTS (map); k++)
            if (strncmp (start + i, map[k].e, n) == 0)
              g_string_append_c (v, map[k].c);
        }
      i += n;
    }
  return g_string_free (g_steal_pointer (&v), FALSE);
}

static gboolean
href_allowed (const char *href)
{
  static const char *const schemes[] = { "https://", "http://", "mailto:" };

  if (strlen (href) > HREF_MAX || !g_utf8_validate (href, -1, NULL))
    return FALSE;
  for (const char *p = href; *p; p++)
    if (g_ascii_iscntrl (*p) || *p == ' ')
      return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (schemes); i++)
    if (g_ascii_strncasecmp (href, schemes[i], strlen (schemes[i])) == 0 && href[strlen (schemes[i])] != '\0')
      return TRUE;
  return FALSE;
}

typedef struct {
  gboolean closing, self_closing;
  char     name[8];       /* lower case; longer names are not ours and end up "" */
  char    *href;          /* decoded, if the tag had one */
} Tag;

/* Scan one attribute at *@pp; FALSE if the tag is malformed. */
static gboolean
scan_attribute (const char **pp, Tag *tag)
{
  const char *p = *pp, *name = p, *value = NULL;
  gsize name_len, value_len = 0;

  while (*p && !g_ascii_isspace (*p) && *p != '=' && *p != '>' && *p != '/' && *p != '<')
    p++;
  name_len = p - name;
  if (name_len == 0)
    return FALSE;
  while (g_ascii_isspace (*p))
    p++;
  if (*p == '=')
    {
      p++;
      while (g_ascii_isspace (*p))
        p++;
      if (*p == '"' || *p == '\'')
        {
          const char *end = strchr (p + 1, *p);

          if (end == NULL)
            return FALSE;
          value = p + 1;
          value_len = end - value;
          p = end + 1;
        }
      else
        {
          value = p;
          while (*p && !g_ascii_isspace (*p) && *p != '>' && *p != '<')
            p++;
          value_len = p - value;
        }
    }
  if (value && tag->href == NULL && name_len == 4 && g_ascii_strncasecmp (name, "href", 4) == 0)
    tag->href = decode_value (value, value_len);
  *pp = p;
  return TRUE;
}

/* A tag at @p (which is '<'): its length, or 0 when this '<' starts no tag and is text. */
static gsize
scan_tag (const char *p, Tag *tag)
{
  const char *q = p + 1, *name;

  memset (tag, 0, sizeof *tag);
  if (*q == '/')
    {
      tag->closing = TRUE;
      q++;
    }
  name = q;
  if (!g_ascii_isalpha (*q))
    return 0;
  while (is_name_char (*q))
    q++;
  if ((gsize) (q - name) < sizeof tag->name)
    for (gsize i = 0; i < (gsize) (q - name); i++)
      tag->name[i] = g_ascii_tolower (name[i]);
  for (;;)
    {
      while (g_ascii_isspace (*q))
        q++;
      if (*q == '>')
        return q + 1 - p;
      if (q[0] == '/' && q[1] == '>')
        {
          tag->self_closing = TRUE;
          return q + 2 - p;
        }
      if (tag->closing || !scan_attribute (&q, tag))
        {
          g_clear_pointer (&tag->href, g_free);
          return 0;
        }
    }
}

/* "<!-- -->", "<!DOCTYPE …>", "<![CDATA[…]]>", "<?…?>": their length, 0 if unterminated. */
static gsize
scan_declaration (const char *p)
{
  const char *end = NULL, *close = ">";

  if (g_str_has_prefix (p, "<!--"))
    close = "-->";
  else if (g_str_has_prefix (p, "<![CDATA["))
    close = "]]>";
  else if (p[1] == '?')
    close = "?>";
  else if (p[1] != '!')
    return 0;
  end = strstr (p + 2, close);
  return end ? (gsize) (end + strlen (close) - p) : 0;
}

static void
close_to (Sanitizer *s, guint depth)
{
  while (s->depth > depth)
    {
      char t = s->stack[--s->depth];

      g_string_append (s->out, t == TAG_A ? "</a>" : t == TAG_B ? "</b>" : "</i>");
    }
}

static gboolean
stack_has (Sanitizer *s, char t, guint *at)
{
  for (guint i = s->depth; i > 0; i--)
    if (s->stack[i - 1] == t)
      {
        if (at)
          *at = i - 1;
        return TRUE;
      }
  return FALSE;
}

static void
apply_tag (Sanitizer *s, Tag *tag)
{
  char t = g_str_equal (tag->name, "b") ? TAG_B : g_str_equal (tag->name, "i") ? TAG_I
         : g_str_equal (tag->name, "a") ? TAG_A : 0;
  guint at;

  if (t == 0 || tag->self_closing)
    return;   /* not in the subset: the tag goes, its text stays */
  if (tag->closing)
    {
      if (stack_has (s, t, &at))
        {
          flush_space (s);
          close_to (s, at);
        }
      return;
    }
  if (s->depth == MARKUP_DEPTH_MAX || (t == TAG_A && (stack_has (s, TAG_A, NULL) || !tag->href ||
                                                      !href_allowed (tag->href))))
    return;
  flush_space (s);
  if (t == TAG_A)
    {
      g_autofree char *escaped = g_markup_escape_text (tag->href, -1);

      g_string_append_printf (s->out, "<a href=\"%s\">", escaped);
    }
  else
    g_string_append (s->out, t == TAG_B ? "<b>" : "<i>");
  s->stack[s->depth++] = t;
}

static gboolean
is_well_formed (const char *markup, GError **error)
{
  static const GMarkupParser none = { 0 };
  g_autoptr(GMarkupParseContext) context = g_markup_parse_context_new (&none, 0, NULL, NULL);

  return g_markup_parse_context_parse (context, "<markup>", -1, error) &&
         g_markup_parse_context_parse (context, markup, -1, error) &&
         g_markup_parse_context_parse (context, "</markup>", -1, error) &&
         g_markup_parse_context_end_parse (context, error);
}

char *
limen_notification_markup_sanitize (const char *markup, GError **error)
{
  Sanitizer s = { g_string_sized_new (strlen (markup) + 16), { 0 }, 0, FALSE, FALSE };
  const char *p = markup;

  g_autoptr(GError) malformed = NULL;

  if (!g_utf8_validate (markup, -1, NULL))
    {
      limen_option_set_error (error, "markup-body", "not UTF-8");
      g_string_free (s.out, TRUE);
      return NULL;
    }
  /* Markup an app sends must be well-formed (as the reference requires): a stray '<' or '&'
   * or crossed tags are the app's mistake, answered with the parser's words. */
  if (!is_well_formed (markup, &malformed))
    {
      g_autofree char *detail = g_strdup_printf ("invalid markup-body: %s", malformed->message);

      limen_option_set_error (error, "markup-body", detail);
      g_string_free (s.out, TRUE);
      return NULL;
    }
  while (*p)
    {
      Tag tag = { 0 };
      gsize n;

      if (*p != '<')
        n = put_text_char (&s, p);
      else if ((n = scan_declaration (p)) == 0 && (n = scan_tag (p, &tag)) > 0)
        {
          apply_tag (&s, &tag);
          g_free (tag.href);
        }
      else if (n == 0)
        n = put_text_char (&s, p);
      p += n;
      if (s.out->len > LIMEN_NOTIFICATION_MARKUP_OUT_MAX)
        {
          limen_option_set_error (error, "markup-body", "too long once escaped");
          g_string_free (s.out, TRUE);
          return NULL;
        }
    }
  close_to (&s, 0);
  /* Only ever fails if the scanner above is wrong: then nothing is better than bad markup. */
  if (!is_well_formed (s.out->str, NULL))
    {
      g_warning ("Sanitised notification markup is not well-formed; refused");
      limen_option_set_error (error, "markup-body", "cannot be made valid");
      g_string_free (s.out, TRUE);
      return NULL;
    }
  return g_string_free (s.out, FALSE);
}

static void
collect_text (GMarkupParseContext *context, const char *text, gsize len, gpointer user_data, GError **error)
{
  g_string_append_len (user_data, text, len);
}

char *
limen_notification_markup_to_plain (const char *sanitized)
{
  static const GMarkupParser parser = { .text = collect_text };
  GString *text = g_string_new (NULL);
  g_autoptr(GMarkupParseContext) context = g_markup_parse_context_new (&parser, 0, text, NULL);

  if (!g_markup_parse_context_parse (context, "<markup>", -1, NULL) ||
      !g_markup_parse_context_parse (context, sanitized, -1, NULL) ||
      !g_markup_parse_context_parse (context, "</markup>", -1, NULL) ||
      !g_markup_parse_context_end_parse (context, NULL))
    g_string_truncate (text, 0);
  return g_string_free (text, FALSE);
}

/* "x-" and then letters, digits, '.', '-' or '_': the specification's vendor extensions. */
static gboolean
is_vendor_name (const char *s)
{
  if (!g_str_has_prefix (s, "x-") || s[2] == '\0' || strlen (s) > VENDOR_NAME_MAX)
    return FALSE;
  for (const char *p = s + 2; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '.' && *p != '-' && *p != '_')
      return FALSE;
  return TRUE;
}

/* Spellings xdg-desktop-portal's own frontend code has used for three categories, taken
 * from apps written against it (and from such a frontend in front of limen-kde) and passed
 * on in the specification's spelling. */
static const char *const category_aliases[][2] = {
  { "im.message", "im.received" },
  { "call.missed", "call.unanswered" },
  { "cellbroadcast.amberalert", "cellbroadcast.amber-alert" },
};

static const char *
category_canonical (const char *category)
{
  for (guint i = 0; i < G_N_ELEMENTS (category_aliases); i++)
    if (g_str_equal (category, category_aliases[i][0]))
      return category_aliases[i][1];
  return category;
}

gboolean
limen_notification_category_is_valid (const char *category)
{
  return g_strv_contains (limen_notification_categories, category_canonical (category)) ||
         is_vendor_name (category);
}

gboolean
limen_notification_purpose_is_valid (const char *purpose)
{
  return g_strv_contains (limen_notification_button_purposes, purpose) || is_vendor_name (purpose);
}

/* ---- option validators --------------------------------------------------------------- */

gboolean
limen_validate_notification_markup (const LimenOption *o, GVariant *v, GError **error)
{
  g_autofree char *sanitized = NULL;

  if (!limen_validate_string_length (o, v, error))
    return FALSE;
  sanitized = limen_notification_markup_sanitize (g_variant_get_string (v, NULL), error);
  return sanitized != NULL;
}

gboolean
limen_validate_notification_category (const LimenOption *o, GVariant *v, GError **error)
{
  if (!limen_notification_category_is_valid (g_variant_get_string (v, NULL)))
    {
      limen_option_set_error (error, o->key, "not a supported category (the specification's or an x-vendor one)");
      return FALSE;
    }
  return TRUE;
}

/* The count is bounded (a wrong call), an unknown hint is not: it is dropped on the way. */
gboolean
limen_validate_notification_display_hints (const LimenOption *o, GVariant *v, GError **error)
{
  g_autofree const char **hints = NULL;

  if (g_variant_n_children (v) > (o->max ? o->max : DISPLAY_HINTS_MAX))
    {
      limen_option_set_error (error, o->key, "too many display hints");
      return FALSE;
    }
  /* Every hint one of the specification's (as the reference has it): an unknown one is the
   * app's mistake, not a hint to leave out quietly. */
  hints = g_variant_get_strv (v, NULL);
  for (guint i = 0; hints[i]; i++)
    if (!g_strv_contains (limen_notification_display_hints, display_hint_canonical (hints[i])))
      {
        g_autofree char *shown = shown_value (hints[i]);
        g_autofree char *detail = g_strdup_printf ("%s not a display-hint (transient, tray, persistent, "
                                                   "hide-on-lockscreen, hide-content-on-lockscreen or "
                                                   "show-as-new)", shown);

        limen_option_set_error (error, o->key, detail);
        return FALSE;
      }
  return TRUE;
}

gboolean
limen_validate_notification_priority (const LimenOption *o, GVariant *v, GError **error)
{
  static const char *const known[] = { "low", "normal", "high", "urgent", NULL };

  if (!g_strv_contains (known, g_variant_get_string (v, NULL)))
    {
      g_autofree char *shown = shown_value (g_variant_get_string (v, NULL));
      g_autofree char *detail = g_strdup_printf ("%s not a priority: must be low, normal, high or urgent", shown);

      limen_option_set_error (error, o->key, detail);
      return FALSE;
    }
  return TRUE;
}

/* Themed icon names: 1 to 256 of [A-Za-z0-9._-], nothing a theme lookup could take for a
 * path: no slash, and no leading dot (".." and "." name folders, a server joining the name to
 * a theme folder would look beside or above it). */
gboolean
limen_notification_name_is_valid (const char *s)
{
  if (*s == '\0' || *s == '.' || strlen (s) > 256)
    return FALSE;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '.' && *p != '_')
      return FALSE;
  return TRUE;
}

/* Action names travel back to the app only (an "app." one to its GApplication, which judges
 * it): 1 to 256 bytes of UTF-8 without control characters. The reference takes any string. */
static gboolean
action_name_is_valid (const char *s)
{
  if (*s == '\0' || strlen (s) > 256 || !g_utf8_validate (s, -1, NULL))
    return FALSE;
  for (const char *p = s; *p; p++)
    if (g_ascii_iscntrl (*p))
      return FALSE;
  return TRUE;
}

gboolean
limen_validate_notification_action (const LimenOption *o, GVariant *v, GError **error)
{
  if (!action_name_is_valid (g_variant_get_string (v, NULL)))
    {
      limen_option_set_error (error, o->key, "not an action name");
      return FALSE;
    }
  return TRUE;
}

/* Targets travel back to the app only; they must still be small. */
gboolean
limen_validate_notification_target (const LimenOption *o, GVariant *v, GError **error)
{
  if (g_variant_get_size (v) > TARGET_MAX)
    {
      limen_option_set_error (error, o->key, "action target too large");
      return FALSE;
    }
  return TRUE;
}

/* One button: a label (optional when a purpose says what it does), an action, maybe a
 * target and a purpose; other keys are left out later. */
static const char *
button_problem (GVariant *button)
{
  g_autoptr(GVariant) label = g_variant_lookup_value (button, "label", NULL);
  g_autoptr(GVariant) action = g_variant_lookup_value (button, "action", NULL);
  g_autoptr(GVariant) target = g_variant_lookup_value (button, "target", NULL);
  g_autoptr(GVariant) purpose = g_variant_lookup_value (button, "purpose", NULL);

  if ((label && !g_variant_is_of_type (label, G_VARIANT_TYPE_STRING)) ||
      (action && !g_variant_is_of_type (action, G_VARIANT_TYPE_STRING)) ||
      (purpose && !g_variant_is_of_type (purpose, G_VARIANT_TYPE_STRING)))
    return "label, action and purpose of a button are strings";
  if (label && (g_variant_get_size (label) <= 1 || g_variant_get_size (label) > LABEL_MAX + 1 ||
                !g_utf8_validate (g_variant_get_string (label, NULL), -1, NULL)))
    return "a button label has 1 to 256 bytes of UTF-8";
  if (!label && !purpose)
    return "a button needs a label or a purpose";
  if (!action || !action_name_is_valid (g_variant_get_string (action, NULL)))
    return "a button needs an action name";
  if (target && g_variant_get_size (target) > TARGET_MAX)
    return "action target too large";
  if (purpose && !limen_notification_purpose_is_valid (g_variant_get_string (purpose, NULL)))
    return "not a button purpose of the specification nor an x-vendor one";
  return NULL;
}

gboolean
limen_validate_notification_buttons (const LimenOption *o, GVariant *v, GError **error)
{
  gsize n = g_variant_n_children (v);

  if (n > (o->max ? o->max : LIMEN_NOTIFICATION_BUTTONS_MAX))
    {
      limen_option_set_error (error, o->key, "too many buttons");
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) button = g_variant_get_child_value (v, i);
      const char *problem = button_problem (button);

      if (problem)
        {
          g_autofree char *detail = g_strdup_printf ("invalid button: %s", problem);

          limen_option_set_error (error, o->key, detail);
          return FALSE;
        }
    }
  return TRUE;
}

/* ---- normalising for the next hop ------------------------------------------------------ */

static GVariant *
normalize_buttons (GVariant *buttons, gboolean version_2, GError **error)
{
  GVariantBuilder out;

  g_variant_builder_init (&out, G_VARIANT_TYPE ("aa{sv}"));
  for (gsize i = 0; i < g_variant_n_children (buttons); i++)
    {
      g_autoptr(GVariant) button = g_variant_get_child_value (buttons, i);
      GVariantBuilder b;
      static const char *const keys[] = { "label", "action", "target", "purpose" };

      /* A version 1 backend knows no purpose: such a button must name itself. */
      if (!version_2 && !g_variant_lookup (button, "label", "&s", NULL))
        {
          g_variant_builder_clear (&out);
          limen_option_set_error (error, "buttons", "a button needs a label (the backend knows no purposes)");
          return NULL;
        }
      g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
      for (guint k = 0; k < G_N_ELEMENTS (keys); k++)
        {
          g_autoptr(GVariant) value = g_variant_lookup_value (button, keys[k], NULL);

          if (value && (version_2 || !g_str_equal (keys[k], "purpose")))
            g_variant_builder_add (&b, "{sv}", keys[k], value);
        }
      g_variant_builder_add_value (&out, g_variant_builder_end (&b));
    }
  return g_variant_builder_end (&out);
}

/* Known hints only (the check above lets no other through; the normalising keeps to that on
 * its own), each once, in the spelling of the specification. */
static GVariant *
normalize_display_hints (GVariant *hints)
{
  g_autofree const char **list = g_variant_get_strv (hints, NULL);
  g_autoptr(GPtrArray) kept = g_ptr_array_new ();

  for (guint i = 0; list[i]; i++)
    {
      const char *h = display_hint_canonical (list[i]);

      if (!g_strv_contains (limen_notification_display_hints, h))
        g_debug ("Notification display hint %s is unknown; left out", h);
      else if (!g_ptr_array_find_with_equal_func (kept, h, g_str_equal, NULL))
        g_ptr_array_add (kept, (gpointer) h);
    }
  if (kept->len == 0)
    return NULL;
  return g_variant_new_strv ((const char * const *) kept->pdata, kept->len);
}

GVariant *
limen_notification_normalize (GVariant *filtered, gboolean version_2, GError **error)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autofree char *markup = NULL;
  gboolean has_body = FALSE;
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_variant_iter_init (&iter, filtered);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autoptr(GVariant) owned = value;
      GVariant *out = value;

      if (g_str_equal (key, "markup-body"))
        {
          markup = limen_notification_markup_sanitize (g_variant_get_string (value, NULL), error);
          if (markup == NULL)
            return NULL;
          out = version_2 ? g_variant_new_string (markup) : NULL;
        }
      else if (g_str_equal (key, "display-hint"))
        out = version_2 ? normalize_display_hints (value) : NULL;
      else if (g_str_equal (key, "category"))
        out = version_2 ? g_variant_new_string (category_canonical (g_variant_get_string (value, NULL))) : NULL;
      else if (g_str_equal (key, "buttons"))
        {
          out = normalize_buttons (value, version_2, error);
          if (out == NULL)
            return NULL;
        }
      else if (g_str_equal (key, "body"))
        has_body = TRUE;
      if (out)
        g_variant_builder_add (&b, "{sv}", key, out);
    }
  /* What a version 1 backend can show of a markup-body: its text. */
  if (!version_2 && markup && !has_body)
    {
      g_autofree char *plain = limen_notification_markup_to_plain (markup);

      g_variant_builder_add (&b, "{sv}", "body", g_variant_new_string (plain));
    }
  return g_variant_builder_end (&b);
}
