/* Limen — limen-kde's driver: a backend method that answers through one dialog is one row.
 *
 * Every row runs the same way, the driver's and no other:
 *
 *   1. check the arguments every such method has: the request handle, app_id (bounded
 *      UTF-8) and parent_window (limen_check_parent_window); then the options against the
 *      row's table from option-tables.h (the table the frontend checks the app with); then
 *      the row's @check for the method's own arguments (title, uri, ...), which may read the
 *      checked options. Any refusal is the method's D-Bus error (InvalidArgument naming the
 *      argument or key);
 *   2. get the shim (Error.Failed when it cannot show a window, saying why), unless the
 *      row fetches its own (LIMEN_KDE_METHOD_OWN_SHIM);
 *   3. export the impl Request at the handle (Close or the frontend leaving closes the
 *      dialog through limen_qt_close() and answers 2);
 *   4. the row's @open fills the shim's spec from the checked options and opens the dialog
 *      with the row's @done as its callback; a dialog that cannot be opened is Error.Failed
 *      with the row's @failed message;
 *   5. @done (the result builder) turns what the dialog reports into the results and calls
 *      limen_kde_call_finish (): the reply, the Request unexported, the call freed.
 *
 * Usage (a whole backend method):
 *
 *   static void
 *   on_done (LimenQtDialog *dialog, int response, const char *uri, void *user_data)
 *   {
 *     ... limen_kde_call_finish (user_data, response, results);
 *   }
 *   static gboolean
 *   open_screenshot (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
 *   {
 *     LimenQtScreenshotSpec spec = { 0 };
 *     limen_kde_call_window (call, &spec.window);
 *     ... fill spec from limen_kde_call_options (call)
 *     return limen_kde_call_opened (call, shim->limen_qt_screenshot_open (&spec, (LimenQtScreenshotDone) done, call));
 *   }
 *   static const LimenKdeMethod methods[] = {
 *     { .method = "Screenshot", .options = limen_options_impl_screenshot_screenshot,
 *       .open = open_screenshot, .done = G_CALLBACK (on_done),
 *       .failed = "The screenshot could not be started" },
 *     { NULL }
 *   };
 *   ... limen_kde_driver_offer (limen_dbus_impl_portal_screenshot_skeleton_new (), methods);
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gunixfdlist.h>

#include "limen-kde.h"

G_BEGIN_DECLS

/* One method call in flight, from its arguments to its reply. */
typedef struct _LimenKdeCall LimenKdeCall;

typedef enum {
  LIMEN_KDE_METHOD_NONE = 0,
  /* What it starts has no window and cannot be stopped (Email's mail client): the shim need
   * not show windows, and Close answers 2 at once while the report is still awaited. */
  LIMEN_KDE_METHOD_NO_DIALOG = 1 << 0,
  /* The method answers (u), not (ua{sv}) (Wallpaper.SetWallpaperURI). */
  LIMEN_KDE_METHOD_REPLY_RESPONSE_ONLY = 1 << 1,
  /* The arguments are (handle, app_id, ...), without a parent window (NotifyBackground). */
  LIMEN_KDE_METHOD_NO_PARENT_WINDOW = 1 << 2,
  /* The arguments are (handle, parent_window, app_id, ...) (Usb.AcquireDevices). */
  LIMEN_KDE_METHOD_PARENT_WINDOW_FIRST = 1 << 3,
  /* The opener gets no shim and fetches it when it needs one; the row's @check made sure it
   * can (Print with a token prints without a window). */
  LIMEN_KDE_METHOD_OWN_SHIM = 1 << 4,
} LimenKdeMethodFlags;

/* The method's own arguments (beyond handle, app_id, parent_window and the options);
 * FALSE + InvalidArgument (or another Error) to refuse the call. */
typedef gboolean (*LimenKdeCheckFunc) (LimenKdeCall *call, GError **error);

/* Fill the shim's spec from the checked call and open the dialog with @done as its
 * callback and @call as its user data; return limen_kde_call_opened (call, dialog). */
typedef gboolean (*LimenKdeOpenFunc) (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done);

typedef struct {
  const char         *method;    /* the D-Bus method, "OpenFile" */
  const LimenOption  *options;   /* its table in option-tables.h (the last argument); NULL: none */
  LimenKdeCheckFunc   check;     /* NULL: no arguments of its own */
  LimenKdeOpenFunc    open;      /* the dialog opener */
  GCallback           done;      /* the result builder: the shim's callback of this dialog */
  const char         *failed;    /* Error.Failed's message when the dialog cannot be opened */
  LimenKdeMethodFlags flags;
} LimenKdeMethod;

/* Connect every row of @methods (ended by a NULL method) to @skeleton; returns @skeleton. */
GDBusInterfaceSkeleton *limen_kde_driver_offer (gpointer skeleton, const LimenKdeMethod *methods);

/* The call's arguments: app_id, parent_window, the checked options (a{sv}, never NULL),
 * and the in-argument at @index (a new reference; 0 is the handle). */
const char *limen_kde_call_get_app_id (LimenKdeCall *call);
const char *limen_kde_call_get_parent_window (LimenKdeCall *call);
GVariant *limen_kde_call_get_options (LimenKdeCall *call);
GVariant *limen_kde_call_get_arg (LimenKdeCall *call, gsize index);
/* The string in-argument at @index (borrowed). */
const char *limen_kde_call_get_string (LimenKdeCall *call, gsize index);
/* The bus the call came on (the frontend's). */
GDBusConnection *limen_kde_call_get_connection (LimenKdeCall *call);

/* Where the dialog belongs: parent_window, app_id, and the "modal" option (default TRUE). */
void limen_kde_call_window (LimenKdeCall *call, LimenQtWindow *window);

/* Data of the call's own (the result builder's), freed with @destroy when the call ends. */
void limen_kde_call_set_data (LimenKdeCall *call, gpointer data, GDestroyNotify destroy);
gpointer limen_kde_call_get_data (LimenKdeCall *call);

/* The opener's result: keep @dialog for Close; FALSE when it could not be opened. */
gboolean limen_kde_call_opened (LimenKdeCall *call, LimenQtDialog *dialog);

/* The open dialog of the @method call that @invocation's sender made at @handle, or NULL
 * (for a method that talks to an open dialog: AppChooser.UpdateChoices). */
LimenKdeCall *limen_kde_call_lookup (GDBusMethodInvocation *invocation, const char *handle, const char *method);
LimenQtDialog *limen_kde_call_get_dialog (LimenKdeCall *call);

/* The dialog reported but the call goes on (Print's job after its dialog): a Close from now
 * on answers 2 at once and the call still ends with limen_kde_call_finish (). */
void limen_kde_call_dialog_closed (LimenKdeCall *call);

/* The fds that came with the call (a method with an "h" argument), or NULL. */
GUnixFDList *limen_kde_call_get_fd_list (LimenKdeCall *call);

/* The dialog answered: reply with @response and @results (NULL: empty; floating refs are
 * sunk), unexport the Request and free the call. */
void limen_kde_call_finish (LimenKdeCall *call, int response, GVariant *results);

G_END_DECLS
