/* Limen — the state ScreenCast, RemoteDesktop and Clipboard share on one Session.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

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
  LimenSession      *session;          /* not owned: this is the session's data */
  LimenCastKind      kind;
  LimenCastState     state;
  char              *backend;          /* impl bus name of the kind's interface */
  gboolean           busy;             /* a Select* request is with the backend */
  gboolean           sources_selected;
  gboolean           devices_selected;
  gboolean           clipboard_requested;
  gboolean           clipboard_enabled;
  gboolean           eis_connected;
  guint32            devices;          /* granted by Start */
  guint32            persist_mode;     /* asked for in Select* */
  GArray            *nodes;            /* guint32 PipeWire node ids from Start */
  GArray            *remotes;          /* guint32 PipeWire client ids handed out */
  char              *backend_owner;    /* unique name of the backend: signals come from it */
  GHashTable        *transfers;        /* clipboard serials announced and not yet done */
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

/* Build the impl call tuple (handle, session_handle, app_id, [parent_window,] options). */
GVariant *limen_cast_impl_parameters (LimenRequest *request, LimenSession *session,
                                      const char *parent_window, GVariant *options);

/* Check the backend's streams (a(ua{sv})) and keep only the properties the specification
 * names, with their types; node ids are remembered on @cast. NULL when malformed. */
GVariant *limen_cast_take_streams (LimenCast *cast, GVariant *streams);

/* Validators shared by the tables. */
gboolean limen_cast_validate_persist_mode (const LimenOption *o, GVariant *v, GError **e);
gboolean limen_cast_validate_mask (const LimenOption *o, GVariant *v, GError **e);   /* o->max: allowed bits */
gboolean limen_cast_validate_restore_token (const LimenOption *o, GVariant *v, GError **e);

G_END_DECLS

G_BEGIN_DECLS

/* The whole of ScreenCast/RemoteDesktop CreateSession: check the options, create the
 * Session and the Request (answering its handle), ask the backend of @impl_interface, and
 * answer Response {session_handle} (or close the session when the backend refused).
 * @on_created (may be NULL) runs after the backend said yes. */
void limen_cast_create_session (LimenPortalContext    *context,
                                GDBusMethodInvocation *invocation,
                                GVariant              *options,
                                LimenCastKind          kind,
                                const char            *impl_interface,
                                void                 (*on_created) (LimenCast *cast));

/* Answer @invocation with @error (consumed) and return TRUE: for handlers. */
gboolean limen_cast_return_error (GDBusMethodInvocation *invocation, GError *error);

/* Return @dict (a{sv}) without @key; @dict consumed if floating. */
GVariant *limen_cast_dict_without (GVariant *dict, const char *key);

G_END_DECLS

G_BEGIN_DECLS

/* ScreenCast.Start and RemoteDesktop.Start: check the session's state (created, selected,
 * not started, nothing pending), create the Request, ask the backend, then answer streams
 * (checked), devices and clipboard_enabled (within what was asked) and a new restore
 * token when the person allowed persisting. A refused or failed Start closes the session. */
gboolean limen_cast_start (LimenPortalContext    *context,
                           GDBusMethodInvocation *invocation,
                           const char            *session_handle,
                           const char            *parent_window,
                           GVariant              *options,
                           LimenCastKind          kind);

/* Check that @cast can take a Select* call now; InvalidArgument/NotAllowed otherwise. */
gboolean limen_cast_check_selectable (LimenCast *cast, GError **error);

/* Send Select* (SelectSources or SelectDevices) to the backend of @impl_interface for
 * @cast with @options (checked already) and forward the Response; @selected is set on
 * success. Answers @invocation with the Request handle or an error. */
void limen_cast_select (GDBusMethodInvocation *invocation, LimenCast *cast, const char *impl_interface,
                        const char *method, GVariant *caller_options, GVariant *options,
                        gboolean *selected);

G_END_DECLS
