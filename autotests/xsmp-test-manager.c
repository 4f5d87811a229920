/* Limen tests — a small XSMP session manager standing in for ksmserver.
 *
 * It listens on local ICE sockets only, protects them with an MIT-MAGIC-COOKIE-1 in the
 * file named by $ICEAUTHORITY (as ksmserver does), prints the SESSION_MANAGER value on
 * its first line, then reads commands from stdin and reports what clients do on stdout,
 * one line each:
 *
 *   shutdown [any|errors|none]  SaveYourself(Both, shutdown, style) to every client, as
 *                               ksmserver's logout does; interactions are granted one
 *                               client at a time; InteractDone(cancel) cancels for all
 *   cancel                      ShutdownCancelled to every client (another app cancelled)
 *   checkpoint                  SaveYourself(Local, no shutdown, style none)
 *   die                         Die to every client
 *   clients                     "clients N"
 *   block / unblock             another client interacts (a "Save changes?" dialog) /
 *                               is done: nobody else is granted an interaction meanwhile
 *
 * Events: "register ID", "property ID NAME VALUE", "save-done ID 0|1",
 * "interact-request ID", "interact-done ID 0|1", "cancelled ID", "complete" (every
 * client saved, nobody cancelled), "closed ID".
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <glib-unix.h>
#include <X11/ICE/ICElib.h>
#include <X11/ICE/ICEutil.h>
#include <X11/SM/SMlib.h>

/* Exported by libICE; ksmserver uses it for the same reason: local sockets only. */
extern int _IceTransNoListen (const char *protocol);

typedef struct {
  SmsConn  sms;
  IceConn  ice;
  char    *id;
  gboolean saved;
  gboolean wants_interact;
} Client;

static GList *clients;
static gboolean shutting_down;
static Client *interacting;
static Client blocker = { .id = (char *) "blocker" };
static GMainLoop *loop;

static void
say (const char *fmt, ...) G_GNUC_PRINTF (1, 2);

static void
say (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
}

static void
grant_next_interaction (void)
{
  if (interacting)
    return;
  for (GList *l = clients; l; l = l->next)
    {
      Client *c = l->data;

      if (c->wants_interact)
        {
          c->wants_interact = FALSE;
          interacting = c;
          SmsInteract (c->sms);
          return;
        }
    }
}

static void
check_complete (void)
{
  if (!shutting_down || interacting)
    return;
  for (GList *l = clients; l; l = l->next)
    if (!((Client *) l->data)->saved || ((Client *) l->data)->wants_interact)
      return;
  shutting_down = FALSE;
  say ("complete");
}

static void
cancel_shutdown (const char *by)
{
  shutting_down = FALSE;
  interacting = NULL;
  for (GList *l = clients; l; l = l->next)
    {
      Client *c = l->data;

      c->wants_interact = FALSE;
      SmsShutdownCancelled (c->sms);
    }
  say ("cancelled %s", by);
}

static void
client_gone (Client *c)
{
  clients = g_list_remove (clients, c);
  if (interacting == c)
    interacting = NULL;
  say ("closed %s", c->id ? c->id : "-");
  g_free (c->id);
  g_free (c);
  grant_next_interaction ();
  check_complete ();
}

static Status
on_register (SmsConn sms, SmPointer data, char *previous_id)
{
  Client *c = data;
  char *id = SmsGenerateClientID (sms);

  free (previous_id);
  c->id = g_strdup (id);
  SmsRegisterClientReply (sms, id);
  free (id);
  say ("register %s", c->id);
  /* XSMP: a new client gets a first SaveYourself right after registering. */
  SmsSaveYourself (sms, SmSaveLocal, False, SmInteractStyleNone, False);
  return 1;
}

static void
on_interact_request (SmsConn sms, SmPointer data, int dialog_type)
{
  Client *c = data;

  say ("interact-request %s", c->id);
  c->wants_interact = TRUE;
  grant_next_interaction ();
}

static void
on_interact_done (SmsConn sms, SmPointer data, Bool cancel)
{
  Client *c = data;

  say ("interact-done %s %d", c->id, cancel ? 1 : 0);
  if (interacting != c)
    return;
  interacting = NULL;
  if (cancel && shutting_down)
    cancel_shutdown (c->id);
  else
    grant_next_interaction ();
}

static void
on_save_request (SmsConn sms, SmPointer data, int save_type, Bool shutdown, int style, Bool fast, Bool global)
{
}

static void
on_phase2_request (SmsConn sms, SmPointer data)
{
  SmsSaveYourselfPhase2 (sms);
}

static void
on_save_done (SmsConn sms, SmPointer data, Bool success)
{
  Client *c = data;

  say ("save-done %s %d", c->id, success ? 1 : 0);
  c->saved = TRUE;
  check_complete ();
}

static void
on_close (SmsConn sms, SmPointer data, int count, char **reasons)
{
  Client *c = data;
  IceConn ice = SmsGetIceConnection (sms);

  SmFreeReasons (count, reasons);
  SmsCleanUp (sms);
  IceSetShutdownNegotiation (ice, False);
  IceCloseConnection (ice);
  c->sms = NULL;
}

static void
on_set_properties (SmsConn sms, SmPointer data, int n, SmProp **props)
{
  Client *c = data;

  for (int i = 0; i < n; i++)
    {
      GString *value = g_string_new (NULL);

      for (int v = 0; v < props[i]->num_vals; v++)
        {
          if (strcmp (props[i]->type, SmCARD8) == 0)
            g_string_append_printf (value, "%s%d", v ? "," : "", *(unsigned char *) props[i]->vals[v].value);
          else
            g_string_append_printf (value, "%s%.*s", v ? "," : "", props[i]->vals[v].length,
                                    (char *) props[i]->vals[v].value);
        }
      say ("property %s %s %s", c->id ? c->id : "-", props[i]->name, value->str);
      g_string_free (value, TRUE);
      SmFreeProperty (props[i]);
    }
  free (props);
}

static void
on_delete_properties (SmsConn sms, SmPointer data, int n, char **names)
{
  for (int i = 0; i < n; i++)
    free (names[i]);
  free (names);
}

static void
on_get_properties (SmsConn sms, SmPointer data)
{
  SmsReturnProperties (sms, 0, NULL);
}

static Status
on_new_client (SmsConn sms, SmPointer manager_data, unsigned long *mask, SmsCallbacks *cb, char **failure)
{
  Client *c = g_new0 (Client, 1);

  c->sms = sms;
  c->ice = SmsGetIceConnection (sms);
  clients = g_list_append (clients, c);
  *mask = SmsRegisterClientProcMask | SmsInteractRequestProcMask | SmsInteractDoneProcMask |
          SmsSaveYourselfRequestProcMask | SmsSaveYourselfP2RequestProcMask | SmsSaveYourselfDoneProcMask |
          SmsCloseConnectionProcMask | SmsSetPropertiesProcMask | SmsDeletePropertiesProcMask |
          SmsGetPropertiesProcMask;
#define SET(field, fn) do { cb->field.callback = fn; cb->field.manager_data = c; } while (0)
  SET (register_client, on_register);
  SET (interact_request, on_interact_request);
  SET (interact_done, on_interact_done);
  SET (save_yourself_request, on_save_request);
  SET (save_yourself_phase2_request, on_phase2_request);
  SET (save_yourself_done, on_save_done);
  SET (close_connection, on_close);
  SET (set_properties, on_set_properties);
  SET (delete_properties, on_delete_properties);
  SET (get_properties, on_get_properties);
#undef SET
  return 1;
}

static Client *
client_for_ice (IceConn ice)
{
  for (GList *l = clients; l; l = l->next)
    if (((Client *) l->data)->ice == ice)
      return l->data;
  return NULL;
}

static gboolean
on_client_io (int fd, GIOCondition cond, gpointer user_data)
{
  IceConn ice = user_data;
  IceProcessMessagesStatus status = IceProcessMessages (ice, NULL, NULL);
  Client *c = client_for_ice (ice);

  if (status == IceProcessMessagesIOError)
    {
      if (c && c->sms)
        SmsCleanUp (c->sms);
      IceSetShutdownNegotiation (ice, False);
      IceCloseConnection (ice);
      if (c)
        client_gone (c);
      return G_SOURCE_REMOVE;
    }
  if (status == IceProcessMessagesConnectionClosed)
    {
      if (c)
        client_gone (c);
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

static gboolean
on_listen (int fd, GIOCondition cond, gpointer user_data)
{
  IceAcceptStatus status;
  IceConn ice = IceAcceptConnection (user_data, &status);
  IceConnectStatus cs;

  if (!ice)
    return G_SOURCE_CONTINUE;
  IceSetShutdownNegotiation (ice, False);
  while ((cs = IceConnectionStatus (ice)) == IceConnectPending)
    if (IceProcessMessages (ice, NULL, NULL) == IceProcessMessagesIOError)
      break;
  if (IceConnectionStatus (ice) != IceConnectAccepted)
    {
      say ("rejected");
      IceCloseConnection (ice);
      return G_SOURCE_CONTINUE;
    }
  g_unix_fd_add (IceConnectionNumber (ice), G_IO_IN | G_IO_HUP | G_IO_ERR, on_client_io, ice);
  return G_SOURCE_CONTINUE;
}

static gboolean
on_stdin (int fd, GIOCondition cond, gpointer user_data)
{
  char line[256];

  if (!fgets (line, sizeof line, stdin))
    {
      g_main_loop_quit (loop);
      return G_SOURCE_REMOVE;
    }
  g_strchomp (line);
  if (g_str_has_prefix (line, "shutdown"))
    {
      const char *style_name = line[8] == ' ' ? line + 9 : "any";
      int style = strcmp (style_name, "none") == 0     ? SmInteractStyleNone
                  : strcmp (style_name, "errors") == 0 ? SmInteractStyleErrors
                                                        : SmInteractStyleAny;

      shutting_down = TRUE;
      for (GList *l = clients; l; l = l->next)
        {
          Client *c = l->data;

          c->saved = FALSE;
          c->wants_interact = FALSE;
          SmsSaveYourself (c->sms, SmSaveBoth, True, style, False);
        }
      say ("shutdown-sent %u", g_list_length (clients));
      check_complete ();
    }
  else if (strcmp (line, "cancel") == 0)
    cancel_shutdown ("test");
  else if (strcmp (line, "checkpoint") == 0)
    for (GList *l = clients; l; l = l->next)
      SmsSaveYourself (((Client *) l->data)->sms, SmSaveLocal, False, SmInteractStyleNone, False);
  else if (strcmp (line, "die") == 0)
    for (GList *l = clients; l; l = l->next)
      SmsDie (((Client *) l->data)->sms);
  else if (strcmp (line, "block") == 0 && !interacting)
    interacting = &blocker;
  else if (strcmp (line, "unblock") == 0 && interacting == &blocker)
    {
      interacting = NULL;
      grant_next_interaction ();
      check_complete ();
    }
  else if (strcmp (line, "clients") == 0)
    say ("clients %u", g_list_length (clients));
  else
    say ("unknown %s", line);
  return G_SOURCE_CONTINUE;
}

static Bool
refuse_host_based (char *hostname)
{
  return False;
}

int
main (void)
{
  const char *auth_file = g_getenv ("ICEAUTHORITY");
  IceListenObj *listen;
  IceAuthDataEntry *entries;
  char error[256];
  int n;
  char *ids;
  FILE *f;

  if (!auth_file)
    {
      fprintf (stderr, "ICEAUTHORITY must name the auth file to write\n");
      return 2;
    }
  /* Commands are read with fgets() from a GLib fd watch: no stdio read-ahead. */
  setvbuf (stdin, NULL, _IONBF, 0);
  _IceTransNoListen ("tcp");
  if (!SmsInitialize ("limen-test", "1.0", on_new_client, NULL, refuse_host_based, sizeof error, error) ||
      !IceListenForConnections (&n, &listen, sizeof error, error))
    {
      fprintf (stderr, "cannot listen: %s\n", error);
      return 1;
    }
  f = fopen (auth_file, "w");
  entries = g_new0 (IceAuthDataEntry, 2 * n);
  for (int i = 0; i < n; i++)
    {
      for (int p = 0; p < 2; p++)
        {
          IceAuthDataEntry *e = &entries[2 * i + p];
          IceAuthFileEntry fe;

          e->protocol_name = (char *) (p ? "XSMP" : "ICE");
          e->network_id = IceGetListenConnectionString (listen[i]);
          e->auth_name = (char *) "MIT-MAGIC-COOKIE-1";
          e->auth_data = IceGenerateMagicCookie (16);
          e->auth_data_length = 16;
          fe.protocol_name = e->protocol_name;
          fe.protocol_data_length = 0;
          fe.protocol_data = NULL;
          fe.network_id = e->network_id;
          fe.auth_name = e->auth_name;
          fe.auth_data_length = e->auth_data_length;
          fe.auth_data = e->auth_data;
          if (!f || !IceWriteAuthFileEntry (f, &fe))
            {
              fprintf (stderr, "cannot write %s\n", auth_file);
              return 1;
            }
        }
      IceSetHostBasedAuthProc (listen[i], refuse_host_based);
    }
  fclose (f);
  IceSetPaAuthData (2 * n, entries);

  loop = g_main_loop_new (NULL, FALSE);
  for (int i = 0; i < n; i++)
    g_unix_fd_add (IceGetListenConnectionNumber (listen[i]), G_IO_IN, on_listen, listen[i]);
  g_unix_fd_add (0, G_IO_IN | G_IO_HUP, on_stdin, NULL);
  ids = IceComposeNetworkIdList (n, listen);
  say ("SESSION_MANAGER=%s", ids);
  free (ids);
  g_main_loop_run (loop);
  IceFreeListenObjs (n, listen);
  return 0;
}
