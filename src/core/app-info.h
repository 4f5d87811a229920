/* Limen — who is calling: host app, Flatpak app or Snap, from the bus and /proc.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include <sys/types.h>

G_BEGIN_DECLS

typedef enum {
  LIMEN_APP_KIND_HOST,
  LIMEN_APP_KIND_FLATPAK,
  LIMEN_APP_KIND_SNAP,
} LimenAppKind;

typedef struct _LimenAppInfo LimenAppInfo;

/* Called when a unique name leaves the bus (after its cache entry is dropped). */
typedef void (*LimenPeerVanishedFunc) (const char *unique_name, gpointer user_data);

/* Start tracking peers on @connection: must run before the daemon owns its name.
 * @cancellable (or NULL), once cancelled, ends the bus round trips of identification. */
void limen_app_info_tracker_init (GDBusConnection *connection, GCancellable *cancellable);

/* Take in the bus's list of peers that were there before us (asked by tracker_init without
 * waiting); returns at once once it has. Identification calls it itself; the daemon calls
 * it before owning its name. */
void limen_app_info_tracker_ready (void);

/* Stop tracking and drop the cache (daemon shutdown). */
void limen_app_info_tracker_shutdown (void);

/* Register @func to run whenever a peer disconnects; registering the same pair again is a no-op. */
void limen_app_info_add_vanished_watch (LimenPeerVanishedFunc func, gpointer user_data);

/* Identify the peer @sender (a unique name); cached until the peer leaves.
 * An unidentifiable peer gives LIMEN_ERROR_NOT_ALLOWED. */
LimenAppInfo *limen_app_info_get_for_sender (GDBusConnection *connection,
                                             const char      *sender,
                                             GError         **error);

/* Identify @sender without blocking on the bus (main thread); cached as
 * limen_app_info_get_for_sender does. Finish with limen_app_info_get_for_sender_finish. */
void limen_app_info_get_for_sender_async (GDBusConnection     *connection,
                                          const char          *sender,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data);

/* The identity limen_app_info_get_for_sender_async found, or NULL + LIMEN_ERROR_NOT_ALLOWED
 * (LIMEN_ERROR_FAILED when the tracker shut down meanwhile). */
LimenAppInfo *limen_app_info_get_for_sender_finish (GAsyncResult *result, GError **error);

/* The cached identity of @sender, or NULL when it was not identified yet; any thread. */
LimenAppInfo *limen_app_info_lookup_cached (const char *sender);

/* Hold back every method call on @skeleton from a peer not identified yet until the bus
 * told us who it is, without blocking the main thread; the peer's held calls are then
 * dispatched in order. Call before connecting the skeleton's handle-* handlers. */
void limen_app_info_gate_skeleton (GDBusInterfaceSkeleton *skeleton);
/* Connect a closure with @marshal and @data to every handle-* signal of @skeleton, on the
 * main thread before the handlers connected later (the marshal sets the signal's gboolean
 * return: TRUE when it handled the call). GDBus's g-authorize-method is no such hook: a
 * handler on it moves every call's dispatch to a thread, out of order. */
void limen_skeleton_connect_calls (GDBusInterfaceSkeleton *skeleton, GClosureMarshal marshal, gpointer data);

/* Identify the sender of @invocation; on failure returns NULL after answering @invocation. */
LimenAppInfo *limen_app_info_get_for_invocation (GDBusMethodInvocation *invocation);

/* Identify a process that is not a bus peer (FUSE requests): by pid, checked against
 * its /proc start time; not cached here. */
LimenAppInfo *limen_app_info_get_for_pid (pid_t pid, GError **error);

/* Take a reference. */
LimenAppInfo *limen_app_info_ref (LimenAppInfo *info);
/* Drop a reference. */
void limen_app_info_unref (LimenAppInfo *info);

/* The kind of sandbox (or none) the caller runs in. */
LimenAppKind limen_app_info_get_kind (LimenAppInfo *info);
/* TRUE for an unsandboxed caller. */
gboolean limen_app_info_is_host (LimenAppInfo *info);
/* The app id: Flatpak name, "snap.NAME", a host unit's id, or "" when unknown. */
const char *limen_app_info_get_id (LimenAppInfo *info);
/* Flatpak instance id (or NULL). */
const char *limen_app_info_get_instance (LimenAppInfo *info);
/* The process id seen when the caller was identified. */
pid_t limen_app_info_get_pid (LimenAppInfo *info);
/* The start time of that process, in clock ticks since boot (/proc/PID/stat field 22). */
guint64 limen_app_info_get_start_time (LimenAppInfo *info);
/* Parsed /.flatpak-info or snap metadata (or NULL for host apps). */
GKeyFile *limen_app_info_get_metadata (LimenAppInfo *info);
/* Open the caller's root directory (O_PATH) as long as the identified process still lives; -1 + error else. */
int limen_app_info_open_root (LimenAppInfo *info, GError **error);
/* The caller's uid, gid (from /proc/PID/status at identification). */
uid_t limen_app_info_get_uid (LimenAppInfo *info);
gid_t limen_app_info_get_gid (LimenAppInfo *info);

/* TRUE when @invocation was the call through which the gate identified its sender (its
 * first call to a gated interface): the only call that may still choose its identity. */
gboolean limen_app_info_invocation_is_first (GDBusMethodInvocation *invocation);

/* Set the id of a host app that registered itself (org.freedesktop.host.portal.Registry). */
gboolean limen_app_info_register_host_id (GDBusConnection *connection,
                                          const char      *sender,
                                          const char      *app_id,
                                          GError         **error);

/* Validation of a reverse-DNS application id, by the rules the reference applies: at least
 * two non-empty elements of [A-Za-z0-9_], '-' only in the last one, at most 255 bytes;
 * an element may start with a digit (snap.0ad, the reference's own tests' org.test.1.App). */
gboolean limen_app_id_is_valid (const char *app_id);

/* The Name of the installed APPID.desktop (for a Flatpak app, the one Flatpak exports), or
 * NULL when @app_id is not a valid id or has none. */
char *limen_app_id_dup_display_name (const char *app_id);

/* Parse a /.flatpak-info keyfile; used by the /proc path and the test hook alike. */
LimenAppInfo *limen_app_info_new_flatpak_from_data (const char *data, gsize len,
                                                    pid_t pid, GError **error);

/* Parse a host systemd unit name ("app-[launcher-]ID-RANDOM.scope", "app-[launcher-]ID[@RANDOM].service")
 * into the app id; NULL when it names no app. */
char *limen_app_id_from_unit_name (const char *unit);

/* The app id from a /proc/PID/cgroup's contents (host apps) or NULL. */
char *limen_app_id_from_cgroup (const char *cgroup_contents);

/* TRUE when the /proc/PID/cgroup contents show a Snap scope. */
gboolean limen_cgroup_is_snap (const char *cgroup_contents);

/* The pid behind a pidfd (from /proc/self/fdinfo), or -1. */
pid_t limen_pidfd_get_pid (int pidfd);

/* Whether this build honours XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND (LIMEN_TEST_HOOKS). */
gboolean limen_app_info_test_hooks_compiled (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenAppInfo, limen_app_info_unref)

G_END_DECLS
