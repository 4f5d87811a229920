/* Limen — shortcut triggers: the XDG shortcuts specification's strings ("CTRL+ALT+p"),
 * the Qt key codes KGlobalAccel stores and sends, and the text a person reads.
 *
 * Converting here, in C with xkbcommon's keysym names, keeps ListShortcuts and
 * ShortcutsChanged from loading Qt just to name a key.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shortcut-keys.h"

#include <glib/gi18n.h>
#include <string.h>
#include <xkbcommon/xkbcommon.h>

/* Qt 5's modifier bits and key codes (qnamespace.h); Qt keeps them stable across 5.x. */
#define QT_SHIFT   0x02000000
#define QT_CTRL    0x04000000
#define QT_ALT     0x08000000
#define QT_META    0x10000000
#define QT_KEYPAD  0x20000000
#define QT_MODS    (QT_SHIFT | QT_CTRL | QT_ALT | QT_META | QT_KEYPAD)
#define QT_SPECIAL 0x01000000   /* keys from here on are not characters */
#define QT_F1      0x01000030

typedef struct {
  xkb_keysym_t keysym;
  int          qt;
  const char  *label;   /* what the person reads; translated */
} KeyName;

/* Keys that are not characters. The first keysym of a Qt key is the one a trigger gets. */
static const KeyName special_keys[] = {
  { XKB_KEY_Escape, 0x01000000, NC_("keyboard key", "Esc") },
  { XKB_KEY_Tab, 0x01000001, NC_("keyboard key", "Tab") },
  { XKB_KEY_ISO_Left_Tab, 0x01000002, NC_("keyboard key", "Backtab") },
  { XKB_KEY_BackSpace, 0x01000003, NC_("keyboard key", "Backspace") },
  { XKB_KEY_Return, 0x01000004, NC_("keyboard key", "Return") },
  { XKB_KEY_KP_Enter, 0x01000005, NC_("keyboard key", "Enter") },
  { XKB_KEY_Insert, 0x01000006, NC_("keyboard key", "Ins") },
  { XKB_KEY_Delete, 0x01000007, NC_("keyboard key", "Del") },
  { XKB_KEY_Pause, 0x01000008, NC_("keyboard key", "Pause") },
  { XKB_KEY_Print, 0x01000009, NC_("keyboard key", "Print") },
  { XKB_KEY_Sys_Req, 0x0100000a, NC_("keyboard key", "SysReq") },
  { XKB_KEY_Clear, 0x0100000b, NC_("keyboard key", "Clear") },
  { XKB_KEY_Home, 0x01000010, NC_("keyboard key", "Home") },
  { XKB_KEY_End, 0x01000011, NC_("keyboard key", "End") },
  { XKB_KEY_Left, 0x01000012, NC_("keyboard key", "Left") },
  { XKB_KEY_Up, 0x01000013, NC_("keyboard key", "Up") },
  { XKB_KEY_Right, 0x01000014, NC_("keyboard key", "Right") },
  { XKB_KEY_Down, 0x01000015, NC_("keyboard key", "Down") },
  { XKB_KEY_Prior, 0x01000016, NC_("keyboard key", "PgUp") },
  { XKB_KEY_Next, 0x01000017, NC_("keyboard key", "PgDown") },
  { XKB_KEY_Caps_Lock, 0x01000024, NC_("keyboard key", "CapsLock") },
  { XKB_KEY_Num_Lock, 0x01000025, NC_("keyboard key", "NumLock") },
  { XKB_KEY_Scroll_Lock, 0x01000026, NC_("keyboard key", "ScrollLock") },
  { XKB_KEY_Menu, 0x01000055, NC_("keyboard key", "Menu") },
  { XKB_KEY_Help, 0x01000058, NC_("keyboard key", "Help") },
  { XKB_KEY_XF86Back, 0x01000061, NC_("keyboard key", "Back") },
  { XKB_KEY_XF86Forward, 0x01000062, NC_("keyboard key", "Forward") },
  { XKB_KEY_XF86Stop, 0x01000063, NC_("keyboard key", "Stop") },
  { XKB_KEY_XF86Refresh, 0x01000064, NC_("keyboard key", "Refresh") },
  { XKB_KEY_XF86AudioLowerVolume, 0x01000070, NC_("keyboard key", "Volume Down") },
  { XKB_KEY_XF86AudioMute, 0x01000071, NC_("keyboard key", "Volume Mute") },
  { XKB_KEY_XF86AudioRaiseVolume, 0x01000072, NC_("keyboard key", "Volume Up") },
  { XKB_KEY_XF86AudioPlay, 0x01000080, NC_("keyboard key", "Media Play") },
  { XKB_KEY_XF86AudioStop, 0x01000081, NC_("keyboard key", "Media Stop") },
  { XKB_KEY_XF86AudioPrev, 0x01000082, NC_("keyboard key", "Media Previous") },
  { XKB_KEY_XF86AudioNext, 0x01000083, NC_("keyboard key", "Media Next") },
  { XKB_KEY_XF86AudioRecord, 0x01000084, NC_("keyboard key", "Media Record") },
  { XKB_KEY_XF86AudioPause, 0x01000085, NC_("keyboard key", "Media Pause") },
  { XKB_KEY_XF86HomePage, 0x01000090, NC_("keyboard key", "Home Page") },
  { XKB_KEY_XF86Search, 0x01000092, NC_("keyboard key", "Search") },
  { XKB_KEY_XF86Mail, 0x010000a0, NC_("keyboard key", "Mail") },
  { XKB_KEY_XF86MonBrightnessUp, 0x010000b2, NC_("keyboard key", "Monitor Brightness Up") },
  { XKB_KEY_XF86MonBrightnessDown, 0x010000b3, NC_("keyboard key", "Monitor Brightness Down") },
  { XKB_KEY_XF86PowerOff, 0x010000b7, NC_("keyboard key", "Power Off") },
  { XKB_KEY_XF86Eject, 0x010000b9, NC_("keyboard key", "Eject") },
  { XKB_KEY_XF86ScreenSaver, 0x010000ba, NC_("keyboard key", "Screensaver") },
  { XKB_KEY_XF86Calculator, 0x010000cb, NC_("keyboard key", "Calculator") },
  { XKB_KEY_XF86AudioMicMute, 0x01000113, NC_("keyboard key", "Microphone Mute") },
  { XKB_KEY_XF86Sleep, 0x01020004, NC_("keyboard key", "Sleep") },
};

typedef struct {
  const char *name;   /* as the specification spells it; matched without case */
  int         qt;
} ModName;

static const ModName modifiers[] = {
  { "CTRL", QT_CTRL },
  { "CONTROL", QT_CTRL },
  { "ALT", QT_ALT },
  { "SHIFT", QT_SHIFT },
  { "LOGO", QT_META },
  { "SUPER", QT_META },
  { "META", QT_META },
  { "NUM", QT_KEYPAD },
};

/* The Qt key (no modifiers) of @keysym, 0 when Qt has none. */
static int
keysym_to_qt (xkb_keysym_t keysym)
{
  guint32 cp;

  if (keysym >= XKB_KEY_F1 && keysym <= XKB_KEY_F35)
    return QT_F1 + (int) (keysym - XKB_KEY_F1);
  for (gsize i = 0; i < G_N_ELEMENTS (special_keys); i++)
    if (special_keys[i].keysym == keysym)
      return special_keys[i].qt;
  /* Keypad digits and the like are characters to Qt, with the keypad modifier. */
  cp = xkb_keysym_to_utf32 (keysym);
  if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp >= QT_SPECIAL)
    return 0;
  /* Qt names a letter key by its upper case. */
  return (int) g_unichar_toupper (cp);
}

gboolean
limen_kde_shortcut_parse (const char *trigger, int *qt_key)
{
  g_auto(GStrv) parts = NULL;
  int mods = 0, key;
  guint n;
  xkb_keysym_t keysym;

  if (!trigger || !*trigger || strlen (trigger) > LIMEN_KDE_TRIGGER_MAX)
    return FALSE;
  parts = g_strsplit (trigger, "+", -1);
  n = g_strv_length (parts);
  /* "CTRL++" would split into an empty last part: a '+' key is spelled "plus". */
  if (n == 0 || *parts[n - 1] == '\0')
    return FALSE;
  for (guint i = 0; i + 1 < n; i++)
    {
      gboolean known = FALSE;

      for (gsize m = 0; m < G_N_ELEMENTS (modifiers); m++)
        if (g_ascii_strcasecmp (parts[i], modifiers[m].name) == 0)
          {
            mods |= modifiers[m].qt;
            known = TRUE;
          }
      if (!known)
        return FALSE;
    }
  keysym = xkb_keysym_from_name (parts[n - 1], XKB_KEYSYM_NO_FLAGS);
  if (keysym == XKB_KEY_NoSymbol)
    keysym = xkb_keysym_from_name (parts[n - 1], XKB_KEYSYM_CASE_INSENSITIVE);
  if (keysym == XKB_KEY_NoSymbol)
    return FALSE;
  /* The keypad's own keysyms carry the keypad modifier in Qt. */
  if (keysym >= XKB_KEY_KP_Space && keysym <= XKB_KEY_KP_9 && keysym != XKB_KEY_KP_Enter)
    mods |= QT_KEYPAD;
  key = keysym_to_qt (keysym);
  if (key == 0)
    return FALSE;
  *qt_key = mods | key;
  return TRUE;
}

/* The keysym of a Qt key without modifiers (the first one the table gives). */
static xkb_keysym_t
qt_to_keysym (int key)
{
  if (key >= QT_F1 && key < QT_F1 + 35)
    return XKB_KEY_F1 + (xkb_keysym_t) (key - QT_F1);
  if (key >= QT_SPECIAL)
    {
      for (gsize i = 0; i < G_N_ELEMENTS (special_keys); i++)
        if (special_keys[i].qt == key)
          return special_keys[i].keysym;
      return XKB_KEY_NoSymbol;
    }
  if (key <= 0)
    return XKB_KEY_NoSymbol;
  return xkb_utf32_to_keysym (g_unichar_tolower ((gunichar) key));
}

char *
limen_kde_shortcut_to_trigger (int qt_key)
{
  static const struct { int bit; const char *name; } order[] = {
    { QT_CTRL, "CTRL" }, { QT_ALT, "ALT" }, { QT_SHIFT, "SHIFT" }, { QT_META, "LOGO" }, { QT_KEYPAD, "NUM" },
  };
  xkb_keysym_t keysym = qt_to_keysym (qt_key & ~QT_MODS);
  char name[64];
  GString *out;

  if (keysym == XKB_KEY_NoSymbol || xkb_keysym_get_name (keysym, name, sizeof name) <= 0)
    return NULL;
  out = g_string_new (NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (order); i++)
    if (qt_key & order[i].bit)
      g_string_append_printf (out, "%s+", order[i].name);
  g_string_append (out, name);
  return g_string_free (out, FALSE);
}

/* One chord as a person reads it, in Qt's order (Meta, Ctrl, Alt, Shift, Num); untranslated
 * (@translate FALSE) it is Qt's portable text, as kglobalshortcutsrc keeps it. */
static void
describe_chord (GString *out, int qt_key, gboolean translate)
{
  int key = qt_key & ~QT_MODS;

  if (qt_key & QT_META)
    g_string_append_printf (out, "%s+", translate ? C_("keyboard modifier", "Meta") : "Meta");
  if (qt_key & QT_CTRL)
    g_string_append_printf (out, "%s+", translate ? C_("keyboard modifier", "Ctrl") : "Ctrl");
  if (qt_key & QT_ALT)
    g_string_append_printf (out, "%s+", translate ? C_("keyboard modifier", "Alt") : "Alt");
  if (qt_key & QT_SHIFT)
    g_string_append_printf (out, "%s+", translate ? C_("keyboard modifier", "Shift") : "Shift");
  if (qt_key & QT_KEYPAD)
    g_string_append_printf (out, "%s+", translate ? C_("keyboard modifier", "Num") : "Num");
  if (key == 0x20)
    g_string_append (out, translate ? C_("keyboard key", "Space") : "Space");
  else if (key >= QT_F1 && key < QT_F1 + 35)
    g_string_append_printf (out, "F%d", key - QT_F1 + 1);
  else if (key >= QT_SPECIAL)
    {
      const char *label = NULL;

      for (gsize i = 0; i < G_N_ELEMENTS (special_keys) && !label; i++)
        if (special_keys[i].qt == key)
          label = translate ? g_dpgettext2 (NULL, "keyboard key", special_keys[i].label) : special_keys[i].label;
      if (label)
        g_string_append (out, label);
      else
        g_string_append_printf (out, "0x%x", (unsigned) key);
    }
  else if (key > 0 && g_unichar_validate ((gunichar) key))
    g_string_append_unichar (out, (gunichar) key);
}

static char *
describe (const int *keys, gsize n_keys, gboolean translate)
{
  GString *out = g_string_new (NULL);

  for (gsize i = 0; i < n_keys; i++)
    {
      if (keys[i] == 0)
        continue;
      if (out->len > 0)
        g_string_append (out, ", ");
      describe_chord (out, keys[i], translate);
    }
  return g_string_free (out, FALSE);
}

char *
limen_kde_shortcut_describe (const int *keys, gsize n_keys)
{
  return describe (keys, n_keys, TRUE);
}

char *
limen_kde_shortcut_describe_portable (const int *keys, gsize n_keys)
{
  return describe (keys, n_keys, FALSE);
}
