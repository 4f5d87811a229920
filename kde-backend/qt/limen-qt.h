/* Limen — liblimen-qt, the Qt/KDE Frameworks shim of limen-kde, seen from C.
 *
 * Plain C: no GLib, no Qt types. Every dialog is opened without blocking; it returns
 * a handle and reports exactly once through its callback (on the GLib main loop, which
 * Qt dispatches through), unless limen_qt_close() ends it first — then the callback
 * never runs and the handle is gone. Strings passed in are copied; strings passed to a
 * callback live only for the duration of the call.
 *
 * All of it lives in liblimen-qt.so, loaded on first use (LIMEN_QT_DLOPEN_FUNCTIONS
 * lists its entry points for the loader). kdeglobals is read without Qt, by
 * ../kdeglobals.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LIMEN_QT_EXPORT __attribute__ ((visibility ("default")))
#else
#define LIMEN_QT_EXPORT
#endif

/* ---- liblimen-qt.so ------------------------------------------------------------- */

typedef struct _LimenQtDialog LimenQtDialog;

/* Portal response codes. */
enum {
  LIMEN_QT_RESPONSE_OK = 0,
  LIMEN_QT_RESPONSE_CANCELLED = 1,
  LIMEN_QT_RESPONSE_OTHER = 2,
};

/* Where a dialog belongs. */
typedef struct {
  const char *parent_window;   /* "x11:HEX", "wayland:HANDLE" or "" */
  const char *app_id;          /* may be "" */
  int         modal;
} LimenQtWindow;

/* A portal choice: a combo box (n_options > 0) or a check box (n_options == 0, initial
 * "true"/"false"). */
typedef struct {
  const char  *id;
  const char  *label;
  size_t       n_options;
  const char **option_ids;
  const char **option_labels;
  const char  *initial;
} LimenQtChoice;

/* The chosen value of choice @id. */
typedef struct {
  const char *id;
  const char *value;
} LimenQtChoiceResult;

/* One pattern of a file filter: a glob (is_mime 0) or a MIME type (is_mime 1). */
typedef struct {
  int         is_mime;
  const char *pattern;
} LimenQtFilterPattern;

typedef struct {
  const char                 *name;
  size_t                      n_patterns;
  const LimenQtFilterPattern *patterns;
} LimenQtFilter;

typedef enum {
  LIMEN_QT_FILE_OPEN,
  LIMEN_QT_FILE_SAVE,
  LIMEN_QT_FILE_SAVE_FILES,
} LimenQtFileMode;

typedef struct {
  LimenQtWindow         window;
  LimenQtFileMode       mode;
  const char           *title;
  const char           *accept_label;    /* NULL: the dialog's own */
  int                   multiple;        /* OPEN */
  int                   directory;       /* OPEN: pick folders */
  size_t                n_filters;
  const LimenQtFilter  *filters;
  int                   current_filter;  /* index into filters, -1: first */
  size_t                n_choices;
  const LimenQtChoice  *choices;
  const char           *current_folder;  /* local path or NULL */
  const char           *current_name;    /* SAVE */
  const char           *current_file;    /* SAVE: local path or NULL */
  size_t                n_files;         /* SAVE_FILES: the names to save */
  const char          **files;
  const char           *state_file;      /* our own config file for size and last folder */
} LimenQtFileChooserSpec;

typedef struct {
  size_t                     n_uris;
  const char               **uris;       /* file:// URIs (local paths where possible) */
  int                        filter;     /* index of the chosen filter or -1 */
  size_t                     n_choices;
  const LimenQtChoiceResult *choices;
} LimenQtFileChooserResult;

typedef void (*LimenQtFileChooserDone) (LimenQtDialog *dialog, int response,
                                        const LimenQtFileChooserResult *result,
                                        void *user_data);

typedef struct {
  LimenQtWindow        window;
  const char          *app_title;        /* window title */
  const char          *title;
  const char          *subtitle;
  const char          *body;
  const char          *deny_label;       /* NULL: "Deny" */
  const char          *grant_label;      /* NULL: "Allow" */
  const char          *icon;             /* themed icon name or NULL */
  size_t               n_choices;
  const LimenQtChoice *choices;
} LimenQtAccessSpec;

typedef void (*LimenQtAccessDone) (LimenQtDialog *dialog, int response,
                                   size_t n_choices, const LimenQtChoiceResult *choices,
                                   void *user_data);

typedef struct {
  LimenQtWindow window;
  const char   *content_type;   /* MIME type or "" */
  const char   *uri;            /* what is being opened, for the label; may be "" */
  const char   *last_choice;    /* desktop id (no ".desktop") or "" */
  size_t        n_choices;
  const char  **choices;        /* desktop ids offered by the frontend */
} LimenQtAppChooserSpec;

/* @choice: the chosen desktop id (without ".desktop"). */
typedef void (*LimenQtAppChooserDone) (LimenQtDialog *dialog, int response,
                                       const char *choice, void *user_data);

typedef struct {
  LimenQtWindow window;
  const char   *reason;         /* the app's reason, may be "" */
  const char   *user_name;      /* login name */
  const char   *real_name;
  const char   *image_path;     /* local image or "" */
} LimenQtAccountSpec;

typedef void (*LimenQtAccountDone) (LimenQtDialog *dialog, int response,
                                    const char *real_name, const char *image_path,
                                    void *user_data);

typedef struct {
  const char  *app_id;
  const char  *title;
  const char  *body;            /* plain text, or the sanitised markup when @markup */
  int          markup;          /* @body holds <b>, <i>, <a href> markup */
  const char  *icon_name;       /* themed name, or NULL */
  const char  *icon_file;       /* local image, or NULL */
  int          urgency;         /* 0 low, 1 normal, 2 high, 3 urgent */
  int          has_default_action;
  size_t       n_buttons;
  const char **button_labels;   /* button i invokes action index i; NULL: named by its purpose */
  const char **button_purposes; /* per button, NULL when it has none */
  int          reply_button;    /* the button that is an inline reply field, or -1 */
  const char  *sound_file;      /* local sound for the server to play, or NULL */
  int          suppress_sound;  /* the app asked for silence */
  const char  *category;        /* the "category" hint, or NULL */
  int          transient;       /* not kept in the history */
  int          persistent;      /* stays until the person closes it */
} LimenQtNotificationSpec;

typedef struct _LimenQtNotification LimenQtNotification;

/* @button is the index of the pressed button, -1 for the default action; @reply is the
 * text written into the reply button's field, NULL for a plain press; @activation_token is
 * the XDG activation token the server gave for the click (Wayland), or NULL. */
typedef void (*LimenQtNotificationAction) (LimenQtNotification *notification, int button,
                                           const char *reply, const char *activation_token, void *user_data);
/* The notification went away (dismissed, expired, or closed by us); the handle is gone
 * once this returns. */
typedef void (*LimenQtNotificationClosed) (LimenQtNotification *notification, void *user_data);

typedef struct {
  LimenQtWindow window;
  const char   *to;             /* comma-separated addresses, may be "" */
  const char   *cc;
  const char   *bcc;
  const char   *subject;
  const char   *body;
  size_t        n_attachments;
  const char  **attachments;    /* local paths */
} LimenQtEmailSpec;

typedef void (*LimenQtEmailDone) (int response, const char *error_message, void *user_data);

typedef struct {
  LimenQtWindow window;
  const char   *app_id;
  int           interactive;    /* 1: the dialog (mode, delay, preview, save/cancel) */
  const char   *folder;         /* where the PNG goes; NULL: the user's Pictures folder */
  unsigned      target;         /* portal target: 1 screen, 2 a window the person picks, 4 an
                                   area, 8 the active window; 0 the whole screen */
} LimenQtScreenshotSpec;

/* @uri: file:// URI of the saved PNG (response OK only). */
typedef void (*LimenQtScreenshotDone) (LimenQtDialog *dialog, int response, const char *uri,
                                       void *user_data);

/* @rgb: the picked colour, components in [0, 1] (response OK only). */
typedef void (*LimenQtPickColorDone) (LimenQtDialog *dialog, int response, const double rgb[3],
                                      void *user_data);

/* Print settings as both sides speak them; -1 (or NULL) means "not set". */
typedef struct {
  const char *printer;          /* CUPS queue name */
  int         copies;           /* >= 1 */
  int         collate;
  int         duplex;           /* 0 one-sided, 1 long edge, 2 short edge */
  int         orientation;      /* 0 portrait, 1 landscape, 2 reverse landscape, 3 reverse portrait */
  int         from_page;        /* 1-based range, 0: all pages */
  int         to_page;
  int         color;
  int         reverse;
  const char *paper_name;       /* Qt/PPD key, e.g. "A4" */
  const char *paper_display;    /* e.g. "A4" */
  double      paper_width_mm;   /* 0: unknown */
  double      paper_height_mm;
  double      margin_top_mm, margin_bottom_mm, margin_left_mm, margin_right_mm;
  int         page_set;         /* 0 all or from/to, 1 the app's current page, 2 its selection */
  const char *output_file;      /* printing to this PDF file instead of a printer; NULL: a printer */
} LimenQtPrintSettings;

typedef struct {
  LimenQtWindow        window;
  const char          *title;
  int                  print_now;   /* Print without PreparePrint: the button prints */
  LimenQtPrintSettings initial;
  int                  has_current_page;    /* offer "Current page" */
  int                  has_selected_pages;  /* offer "Selection" */
  int                  print_to_file;       /* offer printing to a PDF file (the app writes PDF) */
  const char          *accept_label;        /* the app's label for the Print button, or NULL */
} LimenQtPrintSpec;

/* @chosen lives for the call only (response OK only). */
typedef void (*LimenQtPrintDone) (LimenQtDialog *dialog, int response, const LimenQtPrintSettings *chosen,
                                  void *user_data);

enum {
  LIMEN_QT_WALLPAPER_BACKGROUND = 1,
  LIMEN_QT_WALLPAPER_LOCKSCREEN = 2,
  LIMEN_QT_WALLPAPER_BOTH = 3,
};

typedef struct {
  LimenQtWindow window;
  const char   *app_id;
  const char   *uri;            /* file:// URI of the picture */
  int           show_preview;   /* 1: ask first, with the picture shown */
  int           set_on;         /* LIMEN_QT_WALLPAPER_* */
} LimenQtWallpaperSpec;

typedef void (*LimenQtWallpaperDone) (LimenQtDialog *dialog, int response, void *user_data);

typedef struct {
  LimenQtWindow window;
  const char   *app_id;
  const char   *name;           /* the app's display name */
} LimenQtBackgroundSpec;

enum {
  LIMEN_QT_BACKGROUND_FORBID = 0,
  LIMEN_QT_BACKGROUND_ALLOW = 1,
  LIMEN_QT_BACKGROUND_ALLOW_ONCE = 2,
};

typedef void (*LimenQtBackgroundDone) (LimenQtDialog *dialog, int response, int choice, void *user_data);

/* One app with windows: 1 running, 2 active (has the focused window). */
typedef void (*LimenQtAppStateFunc) (const char *app_id, unsigned int state, void *user_data);

/* Why the shim cannot show widgets (no display), or NULL when it can. Creates nothing. */
LIMEN_QT_EXPORT const char *limen_qt_unavailable_reason (void);

/* Open a file dialog (KFileWidget). NULL when no dialog can be shown. */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_file_chooser_open (const LimenQtFileChooserSpec *spec,
                                                           LimenQtFileChooserDone done,
                                                           void *user_data);
/* Open an access dialog. */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_access_open (const LimenQtAccessSpec *spec,
                                                     LimenQtAccessDone done, void *user_data);
/* Open an application chooser. */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_app_chooser_open (const LimenQtAppChooserSpec *spec,
                                                          LimenQtAppChooserDone done,
                                                          void *user_data);
/* Replace the list of an open application chooser. */
LIMEN_QT_EXPORT void limen_qt_app_chooser_update (LimenQtDialog *dialog, size_t n_choices,
                                                  const char **choices);
/* Open the account information dialog. */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_account_open (const LimenQtAccountSpec *spec,
                                                      LimenQtAccountDone done, void *user_data);
/* Close a dialog (Request.Close): its callback will not run. */
LIMEN_QT_EXPORT void limen_qt_close (LimenQtDialog *dialog);
/* The X11 window id of an open dialog (0 when not on X11 or not yet shown); for tests. */
LIMEN_QT_EXPORT unsigned long limen_qt_dialog_window_id (LimenQtDialog *dialog);

/* Show a notification (KNotification). NULL when none can be sent. */
LIMEN_QT_EXPORT LimenQtNotification *limen_qt_notification_show (const LimenQtNotificationSpec *spec,
                                                                 LimenQtNotificationAction action,
                                                                 LimenQtNotificationClosed closed,
                                                                 void *user_data);
/* Change a shown notification in place (the server updates it rather than showing a new
 * one); presses then come back for @spec's buttons. */
LIMEN_QT_EXPORT void limen_qt_notification_update (LimenQtNotification *notification,
                                                  const LimenQtNotificationSpec *spec);
/* Withdraw a notification; its closed callback runs. */
LIMEN_QT_EXPORT void limen_qt_notification_close (LimenQtNotification *notification);

/* Start the user's mail client (KEMailClientLauncherJob); reports once. 0 when started. */
LIMEN_QT_EXPORT int limen_qt_email_compose (const LimenQtEmailSpec *spec, LimenQtEmailDone done,
                                            void *user_data);

/* Take a screenshot (KWin's ScreenShot2, else the X root window) and save it as a PNG;
 * interactive: through the screenshot dialog. The handle exists even when no window is
 * shown, so limen_qt_close() works the same. NULL when nothing can be captured. */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_screenshot_open (const LimenQtScreenshotSpec *spec,
                                                         LimenQtScreenshotDone done,
                                                         void *user_data);
/* Let the user click a pixel of a frozen full-screen capture. */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_pick_color_open (const LimenQtWindow *window,
                                                         LimenQtPickColorDone done,
                                                         void *user_data);

/* Open KDE's print dialog (QPrintDialog) preset from @spec->initial. */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_print_open (const LimenQtPrintSpec *spec, LimenQtPrintDone done,
                                                    void *user_data);

/* Set the wallpaper (Plasma's scripting D-Bus API; the lock screen through
 * kscreenlockerrc), after a preview dialog when asked. Reports 2 when Plasma is absent. */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_wallpaper_open (const LimenQtWallpaperSpec *spec,
                                                        LimenQtWallpaperDone done, void *user_data);
/* Tell the user an app runs in the background; they forbid, allow, or allow once. */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_background_open (const LimenQtBackgroundSpec *spec,
                                                         LimenQtBackgroundDone done, void *user_data);
/* Apps that have windows (X11: _KDE_NET_WM_DESKTOP_FILE, _GTK_APPLICATION_ID, or a
 * reverse-DNS WM_CLASS). Nothing without a display. Returns at once. */
LIMEN_QT_EXPORT void limen_qt_app_states (LimenQtAppStateFunc func, void *user_data);
/* Call @changed (coalesced) whenever windows come, go or the active one changes; once
 * is enough, later calls replace the callback. 0 when there is no window system. */
LIMEN_QT_EXPORT int limen_qt_watch_app_states (void (*changed) (void *user_data), void *user_data);

/* ---- screen sharing and remote control (screencast-dialog.cpp) ---------------- */

/* A screen or window the person may share; @id comes back when chosen. */
typedef struct {
  const char *id;
  const char *name;           /* screen: connector name; window: title */
  const char *description;    /* screen: make and model; window: app id */
  const char *icon;           /* window: themed icon name, or NULL */
  int         width, height;  /* screen: pixels */
} LimenQtCastSource;

typedef struct {
  LimenQtWindow            window;
  const char              *app_id;
  unsigned                 types;          /* offered: 1 screens, 2 windows, 4 a new virtual screen */
  int                      multiple;
  int                      offer_restore;  /* show "Allow restoring" */
  size_t                   n_screens;
  const LimenQtCastSource *screens;
  size_t                   n_windows;
  const LimenQtCastSource *windows;
  unsigned                 devices;        /* remote control asked: 1 keyboard, 2 pointer, 4 touch */
  int                      clipboard;      /* remote control: the clipboard asked too */
} LimenQtScreenCastSpec;

/* @chosen: ids of the chosen sources ("virtual" for a new virtual screen); @allow_restore
 * the check box (0 when not shown). */
typedef void (*LimenQtScreenCastDone) (LimenQtDialog *dialog, int response, size_t n_chosen,
                                       const char *const *chosen, int allow_restore, void *user_data);

/* Ask which screens or windows to share (and/or whether to allow remote control). */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_screencast_open (const LimenQtScreenCastSpec *spec,
                                                         LimenQtScreenCastDone done, void *user_data);
/* A live picture of source @id (@width × @height, B G R 255 bytes per pixel, rows @stride
 * apart) for the open picker @dialog, in place of its still. 0 once the dialog no longer
 * shows (accepted, cancelled, a region being drawn): stop sending. */
LIMEN_QT_EXPORT int limen_qt_screencast_preview (LimenQtDialog *dialog, const char *id, int width, int height,
                                                 int stride, const unsigned char *pixels);
typedef struct _LimenQtCastIndicator LimenQtCastIndicator;
/* The person pressed Stop; the indicator stays until limen_qt_cast_indicator_close(). */
typedef void (*LimenQtCastStop) (LimenQtCastIndicator *indicator, void *user_data);

/* A lasting notification that @app_id shares the screen (@sharing) and/or controls
 * @devices, with a Stop button. NULL when no notification can be sent. */
LIMEN_QT_EXPORT LimenQtCastIndicator *limen_qt_cast_indicator_show (const char *app_id, int sharing,
                                                                    unsigned devices, LimenQtCastStop stop,
                                                                    void *user_data);
/* Withdraw the notification and free @indicator; @stop never runs after this. */
LIMEN_QT_EXPORT void limen_qt_cast_indicator_close (LimenQtCastIndicator *indicator);

/* ---- GlobalShortcuts: the binding dialog (shortcuts-dialog.cpp) ---- */

/* One shortcut of an app, as offered to the person and as they leave it. */
typedef struct {
  const char *id;
  const char *description;
  int         key;            /* Qt key code (modifiers | key), 0: no key */
  int         enabled;        /* 1: bound (or to be), 0: left out */
} LimenQtShortcut;

typedef struct {
  LimenQtWindow          window;
  const char            *app_name;          /* the app's display name, never "" */
  const char            *component;         /* KGlobalAccel component: its own keys are no conflict */
  int                    configure;         /* 1: ConfigureShortcuts, every shortcut of the session */
  const char            *activation_token;  /* to raise the dialog, or NULL */
  size_t                 n_shortcuts;
  const LimenQtShortcut *shortcuts;
} LimenQtShortcutsSpec;

/* @chosen: every shortcut of the spec, in its order, as the person left it (OK only). */
typedef void (*LimenQtShortcutsDone) (LimenQtDialog *dialog, int response, size_t n_chosen,
                                      const LimenQtShortcut *chosen, void *user_data);

/* Let the person accept, change or leave out an app's global shortcuts (KKeySequenceWidget). */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_shortcuts_open (const LimenQtShortcutsSpec *spec,
                                                        LimenQtShortcutsDone done, void *user_data);

/* ---- DynamicLauncher: confirming a new launcher (launcher-dialog.cpp) ---- */

typedef struct {
  LimenQtWindow window;
  const char   *app_name;       /* display name of the app that asks, or "" when unknown */
  int           webapp;         /* 1: a web application, 0: an application */
  const char   *target;         /* web application: its address, or NULL */
  const char   *name;           /* the name the app proposes */
  int           editable_name;  /* 1: the person may change the name */
  const void   *icon_data;      /* the launcher's icon: PNG, JPEG or SVG bytes */
  size_t        icon_size;
} LimenQtLauncherSpec;

/* @name: the name the person accepted, trimmed, never "" (response OK only). */
typedef void (*LimenQtLauncherDone) (LimenQtDialog *dialog, int response, const char *name, void *user_data);

/* 1 when @data decodes as a PNG, JPEG or SVG image, a raster one of at most
 * @max_pixels × @max_pixels; 0 otherwise. */
LIMEN_QT_EXPORT int limen_qt_launcher_icon_check (const void *data, size_t size, int max_pixels);
/* Show the launcher and its icon; the person accepts (and may rename it) or cancels. */
LIMEN_QT_EXPORT LimenQtDialog *limen_qt_launcher_open (const LimenQtLauncherSpec *spec, LimenQtLauncherDone done,
                                                       void *user_data);

/* Entry points of liblimen-qt.so, for the loader (X-macro). */
#define LIMEN_QT_DLOPEN_FUNCTIONS(X)   \
  X (limen_qt_unavailable_reason)      \
  X (limen_qt_file_chooser_open)       \
  X (limen_qt_access_open)             \
  X (limen_qt_app_chooser_open)        \
  X (limen_qt_app_chooser_update)      \
  X (limen_qt_account_open)            \
  X (limen_qt_close)                   \
  X (limen_qt_dialog_window_id)        \
  X (limen_qt_notification_show)       \
  X (limen_qt_notification_close)      \
  X (limen_qt_notification_update)     \
  X (limen_qt_email_compose)          \
  X (limen_qt_screenshot_open)         \
  X (limen_qt_pick_color_open)         \
  X (limen_qt_print_open)              \
  X (limen_qt_wallpaper_open)          \
  X (limen_qt_background_open)         \
  X (limen_qt_app_states)              \
  X (limen_qt_watch_app_states)        \
  X (limen_qt_screencast_open)         \
  X (limen_qt_screencast_preview)      \
  X (limen_qt_cast_indicator_show)     \
  X (limen_qt_cast_indicator_close)     \
  X (limen_qt_shortcuts_open)         \
  X (limen_qt_launcher_icon_check)     \
  X (limen_qt_launcher_open)

#ifdef __cplusplus
}
#endif
