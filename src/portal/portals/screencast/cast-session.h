/* Limen — the state ScreenCast, RemoteDesktop and Clipboard share on one Session.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "driver.h"
#include "portal.h"
#include "request.h"
#include "session.h"

G_BEGIN_DECLS

#define LIMEN_SCREEN_CAST_IMPL "org.freedesktop.impl.portal.ScreenCast"
#define LIMEN_REMOTE_DESKTOP_IMPL "org.freedesktop.impl.portal.RemoteDesktop"
#define LIMEN_CLIPBOARD_IMPL "org.freedesktop.impl.portal.Clipboard"

/* Bitmasks of the specification. */
enum { LIMEN_SOURCE_MONITOR = 1, LIMEN_SOURCE_WINDOW = 2, LIMEN_SOURCE_VIRTUAL = 4, LIMEN_SOURCE_ALL = 7 };
enum { LIMEN_CURSOR_HIDDEN = 1, LIMEN_CURSOR_EMBEDDED = 2, LIMEN_CURSOR_METADATA = 4, LIMEN_CURSOR_ALL = 7 };
enum { LIMEN_DEVICE_KEYBOARD = 1, LIMEN_DEVICE_POINTER = 2, LIMEN_DEVICE_TOUCHSCREEN = 4, LIMEN_DEVICE_ALL = 7 };

/* At most this many streams are taken from a backend's Start answer. */
#define LIMEN_CAST_MAX_STREAMS 16

typedef enum {
  LIMEN_CAST_SCREEN_CAST,
  LIMEN_CAST_REMOTE_DESKTOP,
} LimenCastKind;

typedef enum {
  LIMEN_CAST_CREATING,   /* impl CreateSession not answered yet */
  LIMEN_CAST_READY,      /* created: selecting, then Start */
  LIMEN_CAST_STARTING,   /* Start sent to the backend */
  LIMEN_CAST_STARTED,
  LIMEN_CAST_FAILED,     /* Start did not succeed: the session can only be closed */
} LimenCastState;

typedef struct {
  gint32 width, height;
} LimenCastSize;

typedef struct {
  LimenSession      *session;          /* not owned: this is the session's data */
  LimenCastKind      kind;
  LimenCastState     state;
  char              *backend;          /* impl bus name of the kind's interface */
  gboolean           busy;             /* a Select* request is with the backend */
  gboolean           sources_selected;
  gboolean           multiple;         /* SelectSources asked for more than one source */
  gboolean           devices_selected;
  gboolean           clipboard_requested;
  gboolean           clipboard_enabled;
  gboolean           eis_connected;
  guint32            devices;          /* granted by Start */
  guint32            persist_mode;     /* asked for in Select* */
  GArray            *nodes;            /* guint32 PipeWire node ids from Start */
  GArray            *sizes;            /* LimenCastSize of each node, {0, 0} when not given */
  GArray            *remotes;          /* guint64 PipeWire client serials handed out */
  guint              remotes_pending;  /* OpenPipeWireRemote calls with PipeWire now */
  GHashTable        *transfers;        /* clipboard serials announced and not yet done */
  char              *restore_token;    /* the token of mode 2 issued by Start, or NULL */
} LimenCast;

/* Attach fresh cast state of @kind to @session (closing revokes the PipeWire remotes). */
LimenCast *limen_cast_attach (LimenSession *session, LimenCastKind kind, const char *backend);

/* The cast state of the caller's session @path, or NULL + InvalidArgument naming
 * session_handle (absent, another caller's, or not a screen-cast/remote-desktop session).
 * The session reference is returned in @session_out. */
LimenCast *limen_cast_lookup (GDBusMethodInvocation *invocation, const char *path,
                              LimenSession **session_out, GError **error);

/* The open session at @path whoever owns it (for signals from the backend), or NULL. */
LimenCast *limen_cast_lookup_path (const char *path);

/* Close a started session when the person revokes its restore token (of mode 2) in the
 * permission store on @connection (PermissionStore.Changed); idempotent. */
void limen_cast_watch_store (GDBusConnection *connection);

/* Check the backend's streams (a(ua{sv})) and keep only the properties the specification
 * names, with their types; node ids are remembered on @cast. NULL when malformed. */
GVariant *limen_cast_take_streams (LimenCast *cast, GVariant *streams);

G_END_DECLS

G_BEGIN_DECLS

/* Answer @invocation with @error (consumed) and return TRUE: for handlers. */
gboolean limen_cast_return_error (GDBusMethodInvocation *invocation, GError *error);

/* Return @dict (a{sv}) without @key; @dict consumed if floating. */
GVariant *limen_cast_dict_without (GVariant *dict, const char *key);

G_END_DECLS

G_BEGIN_DECLS

/* Driver steps shared by the ScreenCast and RemoteDesktop rows (cast-steps.c); the kind of
 * session is the row's impl interface. */
/* CreateSession, post: the session becomes a cast session ready for selections. */
void limen_cast_step_created (LimenCall *call, GTask *task);
/* SelectSources/SelectDevices, post: remember the selection. */
void limen_cast_step_selected (LimenCall *call, GTask *task);
/* Start, before the handle: refuse what cannot start (unselected, started, wrong kind). */
void limen_cast_step_check_start (LimenCall *call, GTask *task);
/* Start, post: checked streams, granted devices and clipboard, a new restore token; an
 * unusable answer is Response 2. A Start that does not succeed closes the session. */
void limen_cast_step_started (LimenCall *call, GTask *task);

/* For a Select* pre-step: the cast of the call's session when it can take a selection now
 * (marked busy until the call ends), else NULL + error. */
LimenCast *limen_cast_begin_select (LimenCall *call, GError **error);

/* The caller's restore_token option: TRUE with *@token NULL when absent; FALSE +
 * InvalidArgument naming the key when it is not a string or over-long. The token is never
 * given to the backend: it is exchanged for its restore data (limen_cast_restore). */
gboolean limen_cast_caller_token (LimenCall *call, const char **token, GError **error);

/* Exchange the caller's @token (may be NULL) from @table for the backend's restore_data option. */
void limen_cast_restore (LimenCall *call, LimenCast *cast, const char *table, const char *token);

G_END_DECLS
