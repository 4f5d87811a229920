/* Limen — the screen-sharing session shared by ScreenCast, RemoteDesktop and Clipboard:
 * one impl Session may be a remote-desktop session that also casts and uses the
 * clipboard. The streams live here, with the session, never in the shim.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "limen-kde.h"
#include "wayland/loader.h"

G_BEGIN_DECLS

enum { LIMEN_CAST_MONITOR = 1, LIMEN_CAST_WINDOW = 2, LIMEN_CAST_VIRTUAL = 4 };
enum { LIMEN_CURSOR_HIDDEN = 1, LIMEN_CURSOR_EMBEDDED = 2, LIMEN_CURSOR_METADATA = 4 };
enum { LIMEN_DEVICE_KEYBOARD = 1, LIMEN_DEVICE_POINTER = 2, LIMEN_DEVICE_TOUCHSCREEN = 4 };

typedef enum { LIMEN_CAST_NEW, LIMEN_CAST_STARTING, LIMEN_CAST_STARTED } LimenCastState;

typedef struct {
  LimenWlStream *stream;
  guint32        node;
  guint          source_type;
  char          *id;          /* "screen:NAME", "window:UUID" or "virtual" */
  int            x, y, width, height;
} LimenCastStream;

typedef struct _LimenCastStart LimenCastStart;
typedef struct _LimenCastDnd LimenCastDnd;

typedef struct {
  LimenKdeSession *session;
  char            *handle;
  char            *app_id;
  gboolean         remote;             /* made by RemoteDesktop.CreateSession */
  LimenCastState   state;
  /* ScreenCast.SelectSources */
  gboolean         sources_selected;
  guint            types, cursor_mode, persist_mode;
  gboolean         multiple;
  char           **restore_ids;        /* sources from valid restore data, or NULL */
  /* RemoteDesktop.SelectDevices / Clipboard.RequestClipboard */
  gboolean         devices_selected;
  guint            device_types;
  guint            devices;            /* granted at Start */
  gboolean         clipboard_requested, clipboard_enabled;
  guint            rd_persist_mode;
  gboolean         rd_restore;         /* valid remote-desktop restore data came */
  GPtrArray       *streams;            /* LimenCastStream */
  LimenCastStart  *start;              /* the Start in progress */
  LimenQtCastIndicator *indicator;     /* "sharing" notification with a Stop button */
  guint                 indicator_source; /* until it is shown, just after Start */
  LimenCastDnd         *dnd;             /* Do Not Disturb held while streaming */
  guint            clipboard_serial;
  GHashTable      *transfers;          /* serial → fd (GINT_TO_POINTER) of a paste waiting */
} LimenCast;

/* The cast of @session_handle owned by the sender of @invocation; NULL + NotFound. */
LimenCast *limen_cast_lookup (GDBusMethodInvocation *invocation, const char *session_handle, GError **error);
/* Export a new session at @session_handle (CreateSession of either interface). */
LimenCast *limen_cast_new (GDBusMethodInvocation *invocation, const char *session_handle, const char *app_id,
                           gboolean remote, GError **error);
/* Start: ask (or restore), start the streams and answer @invocation (u a{sv}); the
 * results carry devices/clipboard_enabled for remote-desktop sessions. */
void limen_cast_start (LimenCast *cast, GDBusMethodInvocation *invocation, const char *handle,
                       const char *parent_window);
/* Parse restore data (suv) of vendor "KDE": the a{sv} payload of version 1, or NULL. */
GVariant *limen_cast_restore_payload (GVariant *restore_data);

/* screencast-dnd.c: Do Not Disturb while @cast streams (plasmanotifyrc permitting). */
void limen_cast_dnd_begin (LimenCast *cast, GDBusConnection *connection);
void limen_cast_dnd_end (LimenCast *cast);

/* screencast-restore.c: the source to share for restored window @id ("window:UUID"), found
 * again after its app restarted; NULL: ask the person. */
char *limen_cast_restore_window (GVariant *payload, const char *id);
/* Describe the shared windows in restore data @payload, for limen_cast_restore_window(). */
void limen_cast_restore_describe_windows (LimenCast *cast, GVariantBuilder *payload);

/* screencast-region.c: the whole workspace as one source, with two or more screens. */
#define LIMEN_CAST_ALL_SCREENS "all-screens"
gboolean limen_cast_all_screens_area (int *x, int *y, int *width, int *height, int *pixel_width, int *pixel_height);
void limen_cast_offer_all_screens (GArray *screens);
LimenWlStream *limen_cast_stream_all_screens (LimenCast *cast, LimenCastStream *s, LimenWlStreamReady ready,
                                              LimenWlStreamClosed closed);
/* A region the person draws: offered as "region", chosen as "region:X,Y,W,H". */
#define LIMEN_CAST_REGION "region"
gboolean limen_cast_workspace_area (gsize min_screens, int *x, int *y, int *width, int *height, int *pixel_width,
                                    int *pixel_height);
void limen_cast_offer_region (GArray *screens);
gboolean limen_cast_parse_region (const char *id, int *x, int *y, int *width, int *height);
gboolean limen_cast_region_valid (const char *id);
LimenWlStream *limen_cast_stream_region (LimenCast *cast, LimenCastStream *s, const char *id,
                                         LimenWlStreamReady ready, LimenWlStreamClosed closed);

/* screencast-preview.c: live pictures of the screens and windows (ids "screen:NAME",
 * "window:UUID"; others are skipped) in the open picker @dialog; NULL when there are none
 * to be had (the dialog keeps its stills). End it before the dialog is gone. */
typedef struct _LimenCastPreview LimenCastPreview;
LimenCastPreview *limen_cast_preview_begin (LimenQtDialog *dialog, const char *const *ids);
void limen_cast_preview_end (LimenCastPreview *preview);

/* clipboard.c: the session started with the clipboard enabled; stop using it. */
void limen_kde_clipboard_session_started (LimenCast *cast);
void limen_kde_clipboard_session_closed (LimenCast *cast);

G_END_DECLS
