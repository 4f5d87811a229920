/* Limen — InputCapture sessions, shared by the portal (input-capture.c), the relay of its
 * backend's signals (input-capture-relay.c) and the Clipboard portal (screencast/clipboard.c),
 * which a session of CreateSession2 may use when it asked before Start.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

#include "session.h"

G_BEGIN_DECLS

typedef enum {
  LIMEN_CAPTURE_CREATING,   /* CreateSession2 is with the backend */
  LIMEN_CAPTURE_NEW,        /* made by CreateSession2: waits for Start */
  LIMEN_CAPTURE_STARTING,   /* CreateSession or Start is with the backend (the person is asked) */
  LIMEN_CAPTURE_STARTED,
} LimenCaptureState;

/* The trigger states of the specification: the app controls enabled, the compositor active. */
typedef enum {
  LIMEN_TRIGGER_DISABLED,
  LIMEN_TRIGGER_ENABLED,
  LIMEN_TRIGGER_ACTIVE,
} LimenCaptureTrigger;

/* An InputCapture session (its Session's data). */
typedef struct {
  LimenSession        *session;        /* not owned: this is the session's data */
  char                *backend;
  LimenCaptureState    state;
  LimenCaptureTrigger  trigger;
  guint32              asked;          /* capabilities the app asked for */
  guint32              capabilities;   /* granted */
  guint32              persist_mode;   /* what Start asked for */
  char                *restore_token;  /* the token Start handed out, if any */
  gboolean             eis_connected;  /* taken when ConnectToEIS is called */
  gboolean             has_zones;      /* GetZones answered */
  gboolean             zones_stale;    /* ZonesChanged since */
  guint32              zone_set;       /* the serial GetZones answered last */
  gboolean             clipboard_requested;   /* Clipboard.RequestClipboard, before Start */
  gboolean             clipboard_enabled;     /* granted by Start */
  GHashTable          *transfers;             /* clipboard serials announced and not yet done */
} LimenCapture;

/* The capture of the open session at @path, or NULL. */
LimenCapture *limen_input_capture_lookup (const char *path);

/* Close every session @backend holds: it left the bus, and its impl Sessions with it. */
void limen_input_capture_close_backend (const char *backend);

/* Relay @backend's signals to the owners of its captures (set up once per backend). */
void limen_input_capture_relay (GDBusConnection *connection, const char *backend);

G_END_DECLS
