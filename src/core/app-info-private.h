/* Limen — the insides of caller identity, shared by app-info.c and its per-kind files
 * (app-info-process.c, app-info-flatpak.c, app-info-snap.c, app-info-host.c,
 * app-info-registry.c). Not for use outside src/core/app-info*.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "app-info.h"

G_BEGIN_DECLS

/* The most we read of a /proc file (status, cgroup). */
#define LIMEN_APP_INFO_PROC_FILE_MAX (64 * 1024)

struct _LimenAppInfo {
  gint          ref_count;
  LimenAppKind  kind;
  char         *id;
  char         *instance;
  pid_t         pid;
  guint64       start_time;
  uid_t         uid;
  gid_t         gid;
  GKeyFile     *metadata;
  int           proc_fd;      /* /proc/PID as a directory: goes stale (ESRCH) when the process dies */
  gboolean      registered;   /* host id set through the Registry */
};

/* ---- app-info.c ---- */

/* A new identity of @kind for @pid with nothing known yet (no id, no /proc fd). */
LimenAppInfo *limen_app_info_alloc (LimenAppKind kind, pid_t pid);

/* Load @data as a keyfile of sandbox metadata; @what names it in the error ("Flatpak"). */
GKeyFile *limen_app_info_load_metadata (const char *what, const char *data, gsize len, GError **error);

/* ---- app-info-process.c: a live process through its /proc directory ---- */

/* Read all of @fd (at most @max bytes; @name for errors). */
char *limen_app_info_read_fd (int fd, const char *name, gsize max, gsize *len_out, GError **error);

/* Read file @name below @dirfd without following a symlink (at most @max bytes). */
char *limen_app_info_read_at (int dirfd, const char *name, gsize max, gsize *len_out, GError **error);

/* Fill @info's uid and gid from its /proc status (left at -1 when unreadable). */
void limen_app_info_read_ids (LimenAppInfo *info);

/* Open /proc/@pid as an O_PATH directory, or -1 + LIMEN_ERROR_NOT_ALLOWED. */
int limen_app_info_open_proc_dir (pid_t pid, GError **error);

/* Identify the process behind @proc_fd (taken over on success); @not_after: the latest
 * start time the caller may have (0: no bound), against pid reuse. */
LimenAppInfo *limen_app_info_identify_process (int proc_fd, pid_t pid, guint64 not_after, GError **error);

/* ---- app-info-pin.c: a peer's process without a pidfd from the bus ---- */

/* How many times in a row the bus is asked for a peer's pid after its /proc/PID was opened. */
#define LIMEN_APP_INFO_PIN_QUESTIONS 3

/* Now, in /proc/PID/stat's start-time unit (clock ticks since boot). */
guint64 limen_app_info_now_in_ticks (void);

/* Stamp the arrival of every peer on @connection from now on, and ask which are there. */
void limen_app_info_pin_start (GDBusConnection *connection, GCancellable *cancellable);

/* Take in the answer to pin_start's question (at once if it is in). */
void limen_app_info_pin_ready (void);

/* Stop stamping and forget every stamp. */
void limen_app_info_pin_stop (void);

/* When @sender's arrival was read, in ticks; FALSE when it never was, or it left. */
gboolean limen_app_info_pin_arrival (const char *sender, guint64 *ticks);

/* Whether the bus's answer to GetConnectionUnixProcessID (@reply, or @bus_error), asked
 * after @info's /proc directory was opened, pins @info to @sender. */
gboolean limen_app_info_pin_check_answer (LimenAppInfo *info, const char *sender, GVariant *reply,
                                          const GError *bus_error, GError **error);

/* ---- app-info-flatpak.c ---- */

/* Take @info's id, instance and metadata from the contents of a /.flatpak-info. */
gboolean limen_app_info_flatpak_parse (LimenAppInfo *info, const char *data, gsize len, GError **error);

/* Identify @info as a Flatpak app from its root @root_fd: *@found is FALSE (and TRUE is
 * returned) when there is no /.flatpak-info; one that is there must be valid. */
gboolean limen_app_info_flatpak_identify (LimenAppInfo *info, int root_fd, gboolean *found, GError **error);

/* ---- app-info-snap.c ---- */

/* Take @info's id and metadata from `snap routine portal-info` output. */
gboolean limen_app_info_snap_parse (LimenAppInfo *info, const char *data, gsize len, GError **error);

/* Identify @info (whose cgroup shows a Snap scope) by asking snapd. */
gboolean limen_app_info_snap_identify (LimenAppInfo *info, GError **error);

/* ---- app-info-host.c ---- */

/* Identify @info as a host app from its /proc cgroup contents (NULL: unreadable). */
void limen_app_info_host_identify (LimenAppInfo *info, const char *cgroup);

G_END_DECLS
