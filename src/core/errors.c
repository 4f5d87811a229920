/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "errors.h"

static const GDBusErrorEntry limen_error_entries[] = {
  { LIMEN_ERROR_FAILED, "org.freedesktop.portal.Error.Failed" },
  { LIMEN_ERROR_INVALID_ARGUMENT, "org.freedesktop.portal.Error.InvalidArgument" },
  { LIMEN_ERROR_NOT_FOUND, "org.freedesktop.portal.Error.NotFound" },
  { LIMEN_ERROR_EXISTS, "org.freedesktop.portal.Error.Exists" },
  { LIMEN_ERROR_NOT_ALLOWED, "org.freedesktop.portal.Error.NotAllowed" },
  { LIMEN_ERROR_CANCELLED, "org.freedesktop.portal.Error.Cancelled" },
  { LIMEN_ERROR_WINDOW_DESTROYED, "org.freedesktop.portal.Error.WindowDestroyed" },
};

GQuark
limen_error_quark (void)
{
  static gsize quark = 0;

  g_dbus_error_register_error_domain ("limen-error-quark", &quark,
                                      limen_error_entries,
                                      G_N_ELEMENTS (limen_error_entries));
  return (GQuark) quark;
}

void
limen_invocation_return_gerror (GDBusMethodInvocation *invocation,
                                const GError          *error)
{
  /* Make sure the domain is registered before GDBus maps the error. */
  if (error->domain == LIMEN_ERROR || error->domain == G_DBUS_ERROR)
    {
      (void) limen_error_quark ();
      g_dbus_method_invocation_return_gerror (invocation, error);
      return;
    }
  g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR,
                                                 LIMEN_ERROR_FAILED,
                                                 error->message);
}
