/* Limen — portal notifications as KNotification events of our own "limen" component
 * (limen.notifyrc declares the event, so KNotification never drops them silently).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KLocalizedString>
#include <KNotification>
#include <QPointer>

using LimenQt::str;

/* The handle wraps the KNotification, which deletes itself once closed. */
struct _LimenQtNotification
{
  QPointer<KNotification> notification;
  LimenQtNotificationAction action;
  LimenQtNotificationClosed closed;
  void *user_data;
  bool gone = false;
};

extern "C" LIMEN_QT_EXPORT LimenQtNotification *
limen_qt_notification_show (const LimenQtNotificationSpec *spec, LimenQtNotificationAction action,
                            LimenQtNotificationClosed closed, void *user_data)
{
  LimenQt::ensureCoreApplication ();
  auto *n = new KNotification (QStringLiteral ("notification"), KNotification::CloseOnTimeout);
  n->setComponentName (QStringLiteral ("limen"));
  n->setTitle (str (spec->title));
  n->setText (str (spec->body));
  if (spec->icon_file && *spec->icon_file)
    n->setIconName (str (spec->icon_file));
  else if (spec->icon_name && *spec->icon_name)
    n->setIconName (str (spec->icon_name));
  static const KNotification::Urgency urgencies[] = { KNotification::LowUrgency, KNotification::NormalUrgency,
                                                       KNotification::HighUrgency, KNotification::CriticalUrgency };
  n->setUrgency (urgencies[spec->urgency >= 0 && spec->urgency <= 3 ? spec->urgency : 1]);
  if (spec->app_id && *spec->app_id)
    n->setHint (QStringLiteral ("desktop-entry"), str (spec->app_id));
  /* The freedesktop notification hints for an app's own sound or for silence. */
  if (spec->suppress_sound)
    n->setHint (QStringLiteral ("suppress-sound"), true);
  else if (spec->sound_file && *spec->sound_file)
    n->setHint (QStringLiteral ("sound-file"), str (spec->sound_file));
  /* KNotification offers a default action only when it has a label; servers rarely show it. */
  if (spec->has_default_action)
    n->setDefaultAction (i18nc ("@action default action of a notification", "Open"));
  QStringList labels;
  for (size_t i = 0; i < spec->n_buttons; i++)
    labels += str (spec->button_labels[i]);
  n->setActions (labels);

  auto *handle = new _LimenQtNotification { n, action, closed, user_data };
  QObject::connect (n, &KNotification::defaultActivated, n, [handle] {
    if (!handle->gone)
      handle->action (handle, -1, handle->user_data);
  });
  QObject::connect (n, QOverload<unsigned int>::of (&KNotification::activated), n, [handle] (unsigned int index) {
    /* KNotification counts buttons from 1. */
    if (!handle->gone && index >= 1)
      handle->action (handle, int (index) - 1, handle->user_data);
  });
  QObject::connect (n, &KNotification::closed, [handle] {
    if (handle->gone)
      return;
    handle->gone = true;
    handle->closed (handle, handle->user_data);
    delete handle;
  });
  n->sendEvent ();
  return handle;
}

extern "C" LIMEN_QT_EXPORT void
limen_qt_notification_close (LimenQtNotification *handle)
{
  if (!handle || handle->gone)
    return;
  if (handle->notification)
    handle->notification->close ();   /* emits closed() → the callback, then frees */
  else
    {
      handle->gone = true;
      handle->closed (handle, handle->user_data);
      delete handle;
    }
}
