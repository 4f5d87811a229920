/* Limen — portal notifications as KNotification events of our own "limen" component
 * (limen.notifyrc declares the event, so KNotification never drops them silently).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KLocalizedString>
#include <KNotification>
#include <KNotificationReplyAction>
#include <memory>
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
  QMetaObject::Connection activated;   /* button presses, for the current buttons */
};

/* Report a press of @button (-1: the default action) with the activation token the server
 * sent for it, if any. */
static void
pressed (_LimenQtNotification *handle, int button, const char *reply)
{
  if (handle->gone)
    return;
  const QByteArray token = handle->notification ? handle->notification->xdgActivationToken ().toUtf8 () : QByteArray ();
  handle->action (handle, button, reply, token.isEmpty () ? nullptr : token.constData (), handle->user_data);
}

/* The label a button with a purpose but no label of its own gets. */
static QString
purpose_label (const char *purpose)
{
  const QString p = str (purpose);
  if (p == QLatin1String ("im.reply-with-text"))
    return i18nc ("@action:button notification button that answers a message", "Reply");
  if (p == QLatin1String ("call.accept"))
    return i18nc ("@action:button notification button", "Accept");
  if (p == QLatin1String ("call.decline"))
    return i18nc ("@action:button notification button", "Decline");
  if (p == QLatin1String ("call.hang-up"))
    return i18nc ("@action:button notification button", "Hang Up");
  if (p == QLatin1String ("call.enable-speakerphone"))
    return i18nc ("@action:button notification button", "Speaker On");
  if (p == QLatin1String ("call.disable-speakerphone"))
    return i18nc ("@action:button notification button", "Speaker Off");
  return i18nc ("@action:button notification button with an app-defined meaning", "Open");
}

static QString
button_label (const LimenQtNotificationSpec *spec, size_t i)
{
  if (spec->button_labels[i] && *spec->button_labels[i])
    return str (spec->button_labels[i]);
  return purpose_label (spec->button_purposes ? spec->button_purposes[i] : nullptr);
}

/* Buttons, the inline reply field (a plain button where the server has none) and how the
 * presses come back. */
static void
add_actions (KNotification *n, const LimenQtNotificationSpec *spec, _LimenQtNotification *handle)
{
  QStringList labels;
  QVector<int> indices;   /* KNotification's action number - 1 → the spec's button */

  for (size_t i = 0; i < spec->n_buttons; i++)
    if (int (i) != spec->reply_button)
      {
        labels += button_label (spec, i);
        indices += int (i);
      }
  n->setActions (labels);
  if (n->replyAction ())
    n->setReplyAction (nullptr);
  if (spec->reply_button >= 0 && size_t (spec->reply_button) < spec->n_buttons)
    {
      const int button = spec->reply_button;
      auto reply = std::make_unique<KNotificationReplyAction> (button_label (spec, button));
      reply->setPlaceholderText (i18nc ("@info:placeholder notification reply field", "Write a reply…"));
      reply->setFallbackBehavior (KNotificationReplyAction::FallbackBehavior::UseRegularAction);
      QObject::connect (reply.get (), &KNotificationReplyAction::replied, n, [handle, button] (const QString &text) {
        pressed (handle, button, text.toUtf8 ().constData ());
      });
      QObject::connect (reply.get (), &KNotificationReplyAction::activated, n,
                        [handle, button] { pressed (handle, button, nullptr); });
      n->setReplyAction (std::move (reply));
    }
  QObject::disconnect (handle->activated);
  handle->activated = QObject::connect (n, QOverload<unsigned int>::of (&KNotification::activated), n,
                                        [handle, indices] (unsigned int index) {
    /* KNotification counts buttons from 1. */
    if (index >= 1 && int (index) <= indices.size ())
      pressed (handle, indices[int (index) - 1], nullptr);
  });
}

/* Everything of @spec but the flags, which only a new notification takes. */
static void
apply_spec (KNotification *n, const LimenQtNotificationSpec *spec, _LimenQtNotification *handle)
{
  n->setTitle (str (spec->title));
  /* Markup is the sanitised subset; KNotification strips it for a server without
   * body-markup. Plain text is passed as it was. */
  n->setText (str (spec->body));
  if (spec->icon_file && *spec->icon_file)
    n->setIconName (str (spec->icon_file));
  else if (spec->icon_name && *spec->icon_name)
    n->setIconName (str (spec->icon_name));
  else
    n->setIconName (QString ());
  static const KNotification::Urgency urgencies[] = { KNotification::LowUrgency, KNotification::NormalUrgency,
                                                       KNotification::HighUrgency, KNotification::CriticalUrgency };
  n->setUrgency (urgencies[spec->urgency >= 0 && spec->urgency <= 3 ? spec->urgency : 1]);
  QVariantMap hints;
  if (spec->app_id && *spec->app_id)
    hints.insert (QStringLiteral ("desktop-entry"), str (spec->app_id));
  if (spec->category && *spec->category)
    hints.insert (QStringLiteral ("category"), str (spec->category));
  if (spec->transient)
    hints.insert (QStringLiteral ("transient"), true);
  /* The freedesktop notification hints for an app's own sound or for silence. */
  if (spec->suppress_sound)
    hints.insert (QStringLiteral ("suppress-sound"), true);
  else if (spec->sound_file && *spec->sound_file)
    hints.insert (QStringLiteral ("sound-file"), str (spec->sound_file));
  n->setHints (hints);
  /* KNotification offers a default action only when it has a label; servers rarely show it. */
  n->setDefaultAction (spec->has_default_action ? i18nc ("@action default action of a notification", "Open")
                                                : QString ());
  add_actions (n, spec, handle);
}

extern "C" LIMEN_QT_EXPORT LimenQtNotification *
limen_qt_notification_show (const LimenQtNotificationSpec *spec, LimenQtNotificationAction action,
                            LimenQtNotificationClosed closed, void *user_data)
{
  LimenQt::ensureCoreApplication ();
  auto *n = new KNotification (QStringLiteral ("notification"),
                               spec->persistent ? KNotification::Persistent : KNotification::CloseOnTimeout);
  n->setComponentName (QStringLiteral ("limen"));
  auto *handle = new _LimenQtNotification { n, action, closed, user_data };
  apply_spec (n, spec, handle);
  QObject::connect (n, &KNotification::defaultActivated, n, [handle] { pressed (handle, -1, nullptr); });
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
limen_qt_notification_update (LimenQtNotification *handle, const LimenQtNotificationSpec *spec)
{
  if (!handle || handle->gone || !handle->notification)
    return;
  handle->notification->setFlags (spec->persistent ? KNotification::Persistent : KNotification::CloseOnTimeout);
  apply_spec (handle->notification, spec, handle);
  handle->notification->update ();
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
