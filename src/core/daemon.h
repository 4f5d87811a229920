/* Limen — the common life of a daemon: options, i18n, bus names, signals, exit.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  const char   *program;        /* "limen-portal" */
  const char   *summary;        /* --help text */
  const char  **bus_names;      /* NULL-terminated; all are owned, the first decides exit on loss */
  /* Export objects on @connection; runs before any name is requested. FALSE+error aborts (exit 1). */
  gboolean    (*on_bus) (GDBusConnection *connection, gpointer user_data, GError **error);
  /* Runs once when the daemon leaves (signal, name lost): close requests, unmount, close db. */
  void        (*on_shutdown) (gpointer user_data);
  gpointer      user_data;
  GOptionEntry *extra_entries;  /* optional, NULL-terminated */
  /* Optional: startup work that needs no bus (config files, GIO monitors). It runs on a
   * thread of its own while the main thread connects to the session bus, so the two
   * overlap instead of adding up; on_bus runs on the main thread after both. Objects that
   * attach sources take the global default main context (the thread pushes none). */
  void        (*prepare) (gpointer user_data);
  /* Optional: own the primary name on a connection of the program's own (@replace from
   * --replace), after on_bus and before bus_names, which are then all secondary (a name
   * another process has is only warned about). FALSE+error: exit 1. */
  gboolean    (*own_primary) (gboolean replace, gpointer user_data, GError **error);
} LimenDaemonSpec;

/* Run the daemon: parses --replace/--verbose/--version, owns the names, runs the GLib
 * main loop until SIGHUP/SIGINT/SIGTERM or the name is lost. Returns the exit status. */
int limen_daemon_main (const LimenDaemonSpec *spec, int argc, char **argv);

/* The skeleton signal gdbus-codegen emits for @method: "GetUserInformation" →
 * "handle-get-user-information", "SetWallpaperURI" → "handle-set-wallpaper-uri". */
char *limen_daemon_handler_signal (const char *method);

/* Ask the main loop to end with status @status (after on_shutdown). */
void limen_daemon_quit (int status);

G_END_DECLS
