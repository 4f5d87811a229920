/* Limen — wallpaper (preview dialog, Plasma's scripting API, the lock screen's config)
 * and the background-activity dialog plus app states.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KConfig>
#include <KConfigGroup>
#include <KLocalizedString>
#include <KWindowInfo>
#include <KWindowSystem>
#include <KX11Extras>
#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QDialogButtonBox>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPushButton>
#include <QRadioButton>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>
#include <netwm_def.h>

using LimenQt::str;

namespace {

/* A JavaScript string literal for @s (JSON's escaping is a subset of JS's). */
QString jsString (const QString &s)
{
  QByteArray json = QJsonDocument (QJsonArray { s }).toJson (QJsonDocument::Compact);
  return QString::fromUtf8 (json.mid (1, json.size () - 2));
}

class WallpaperDialog : public _LimenQtDialog
{
public:
  WallpaperDialog (const LimenQtWallpaperSpec *spec, LimenQtWallpaperDone done, void *user_data)
    : _LimenQtDialog (&spec->window), m_done (done), m_user_data (user_data), m_uri (str (spec->uri)),
      m_set_on (spec->set_on)
  {
    setObjectName (QStringLiteral ("limen-wallpaper-dialog"));
    if (!spec->show_preview)
      return;
    setWindowTitle (i18nc ("@title:window", "Set Wallpaper"));
    auto *layout = new QVBoxLayout (this);
    auto *preview = new QLabel (this);
    preview->setObjectName (QStringLiteral ("preview"));
    preview->setAlignment (Qt::AlignCenter);
    preview->setMinimumSize (400, 250);
    QImageReader reader (QUrl (m_uri).toLocalFile ());
    reader.setAutoTransform (true);
    /* Decode only what the preview shows: the picture may be huge. */
    const QSize full = reader.size ();
    if (full.isValid ())
      reader.setScaledSize (full.scaled (480, 300, Qt::KeepAspectRatio));
    QImage image = reader.read ();
    if (image.isNull ())
      preview->setText (i18n ("The picture cannot be shown."));
    else
      preview->setPixmap (QPixmap::fromImage (image));
    layout->addWidget (preview, 1);
    const QString where = m_set_on == LIMEN_QT_WALLPAPER_BACKGROUND ? i18n ("Use this picture as the desktop wallpaper?")
                          : m_set_on == LIMEN_QT_WALLPAPER_LOCKSCREEN ? i18n ("Use this picture on the lock screen?")
                                                                      : i18n ("Use this picture as the desktop wallpaper and on the lock screen?");
    auto *label = new QLabel (where, this);
    label->setWordWrap (true);
    layout->addWidget (label);
    auto *buttons = new QDialogButtonBox (this);
    QPushButton *set = buttons->addButton (i18nc ("@action:button", "&Set Wallpaper"), QDialogButtonBox::AcceptRole);
    set->setObjectName (QStringLiteral ("set"));
    set->setDefault (true);
    buttons->addButton (QDialogButtonBox::Cancel);
    connect (buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect (buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget (buttons);
  }

  void apply ()
  {
    Busy busy (this);
    if (m_set_on & LIMEN_QT_WALLPAPER_LOCKSCREEN)
      {
        /* kscreenlocker reads its wallpaper from kscreenlockerrc, as System Settings
         * writes it. */
        KConfig config (QStringLiteral ("kscreenlockerrc"));
        KConfigGroup group = config.group ("Greeter").group ("Wallpaper").group ("org.kde.image").group ("General");
        group.writeEntry ("Image", m_uri);
        group.writeEntry ("PreviewImage", m_uri);
        config.group ("Greeter").writeEntry ("WallpaperPlugin", QStringLiteral ("org.kde.image"));
        if (!config.sync ())
          {
            qWarning ("limen-kde: wallpaper: kscreenlockerrc could not be written");
            finish (LIMEN_QT_RESPONSE_OTHER);
            return;
          }
      }
    if (!(m_set_on & LIMEN_QT_WALLPAPER_BACKGROUND))
      {
        finish (LIMEN_QT_RESPONSE_OK);
        return;
      }
    const QString script = QStringLiteral (
      "var all = desktops();\n"
      "for (var i = 0; i < all.length; i++) {\n"
      "  var d = all[i];\n"
      "  d.wallpaperPlugin = 'org.kde.image';\n"
      "  d.currentConfigGroup = ['Wallpaper', 'org.kde.image', 'General'];\n"
      "  d.writeConfig('Image', %1);\n"
      "}\n").arg (jsString (m_uri));
    QDBusMessage msg = QDBusMessage::createMethodCall (QStringLiteral ("org.kde.plasmashell"), QStringLiteral ("/PlasmaShell"),
                                                       QStringLiteral ("org.kde.PlasmaShell"), QStringLiteral ("evaluateScript"));
    msg << script;
    auto *watcher = new QDBusPendingCallWatcher (QDBusConnection::sessionBus ().asyncCall (msg, 10000), this);
    connect (watcher, &QDBusPendingCallWatcher::finished, this, [this] (QDBusPendingCallWatcher *w) {
      QDBusPendingReply<> reply = *w;
      w->deleteLater ();
      if (reply.isError ())
        qWarning ("limen-kde: wallpaper: Plasma's scripting interface failed: %s: %s",
                  qPrintable (reply.error ().name ()), qPrintable (reply.error ().message ()));
      else
        qInfo ("limen-kde: wallpaper set through org.kde.PlasmaShell.evaluateScript");
      finish (reply.isError () ? LIMEN_QT_RESPONSE_OTHER : LIMEN_QT_RESPONSE_OK);
    });
  }

protected:
  void onFinished (bool accepted) override
  {
    if (accepted)
      apply ();
    else
      finish (LIMEN_QT_RESPONSE_CANCELLED);
  }

private:
  void finish (int response)
  {
    complete ([&] { m_done (this, response, m_user_data); });
  }

  LimenQtWallpaperDone m_done;
  void *m_user_data;
  QString m_uri;
  int m_set_on;
};

class BackgroundDialog : public _LimenQtDialog
{
public:
  BackgroundDialog (const LimenQtBackgroundSpec *spec, LimenQtBackgroundDone done, void *user_data)
    : _LimenQtDialog (&spec->window), m_done (done), m_user_data (user_data)
  {
    setObjectName (QStringLiteral ("limen-background-dialog"));
    const QString name = LimenQt::breakable (spec->name && *spec->name ? str (spec->name) : str (spec->app_id));
    setWindowTitle (i18nc ("@title:window", "Background Activity"));
    auto *layout = new QVBoxLayout (this);
    auto *label = new QLabel (i18n ("%1 is running in the background.", name), this);
    label->setObjectName (QStringLiteral ("title"));
    QFont f = label->font ();
    f.setBold (true);
    label->setFont (f);
    label->setWordWrap (true);
    label->setTextFormat (Qt::PlainText);
    layout->addWidget (label);
    auto *body = new QLabel (i18n ("It can keep running without a window. You can allow this, allow it only this "
                                   "time, or stop it from running in the background."), this);
    body->setWordWrap (true);
    layout->addWidget (body);
    auto *buttons = new QDialogButtonBox (this);
    QPushButton *allow = buttons->addButton (i18nc ("@action:button", "&Allow"), QDialogButtonBox::AcceptRole);
    QPushButton *once = buttons->addButton (i18nc ("@action:button", "Allow &Once"), QDialogButtonBox::ActionRole);
    QPushButton *forbid = buttons->addButton (i18nc ("@action:button", "&Forbid"), QDialogButtonBox::RejectRole);
    allow->setObjectName (QStringLiteral ("allow"));
    once->setObjectName (QStringLiteral ("once"));
    forbid->setObjectName (QStringLiteral ("forbid"));
    /* Return keeps the app running this once: neither a lasting grant nor a kill. */
    once->setDefault (true);
    allow->setAutoDefault (false);
    forbid->setAutoDefault (false);
    connect (allow, &QPushButton::clicked, this, [this] { m_choice = LIMEN_QT_BACKGROUND_ALLOW; accept (); });
    connect (once, &QPushButton::clicked, this, [this] { m_choice = LIMEN_QT_BACKGROUND_ALLOW_ONCE; accept (); });
    connect (forbid, &QPushButton::clicked, this, [this] { m_choice = LIMEN_QT_BACKGROUND_FORBID; accept (); });
    layout->addWidget (buttons);
    setMinimumWidth (420);
  }

protected:
  void onFinished (bool accepted) override
  {
    /* Closing the window (Escape) decides nothing: the app may run this once. */
    const int choice = accepted ? m_choice : LIMEN_QT_BACKGROUND_ALLOW_ONCE;
    complete ([&] { m_done (this, LIMEN_QT_RESPONSE_OK, choice, m_user_data); });
  }

private:
  LimenQtBackgroundDone m_done;
  void *m_user_data;
  int m_choice = LIMEN_QT_BACKGROUND_ALLOW_ONCE;
};

bool looksLikeAppId (const QString &id)
{
  return id.count (QLatin1Char ('.')) >= 2 && !id.contains (QLatin1Char ('/')) && id.size () < 256;
}

} // namespace

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_wallpaper_open (const LimenQtWallpaperSpec *spec, LimenQtWallpaperDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *dialog = new WallpaperDialog (spec, done, user_data);
  if (spec->show_preview)
    {
      dialog->adjustSize ();
      dialog->present ();
    }
  else
    QTimer::singleShot (0, dialog, [dialog] {
      if (!dialog->isClosedByPortal ())
        dialog->apply ();
    });
  return dialog;
}

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_background_open (const LimenQtBackgroundSpec *spec, LimenQtBackgroundDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *dialog = new BackgroundDialog (spec, done, user_data);
  dialog->adjustSize ();
  dialog->present ();
  return dialog;
}

extern "C" LIMEN_QT_EXPORT void
limen_qt_app_states (LimenQtAppStateFunc func, void *user_data)
{
  if (!LimenQt::ensureApplication () || !KWindowSystem::isPlatformX11 ())
    return;
  const WId active = KX11Extras::activeWindow ();
  QHash<QString, unsigned int> states;
  for (WId w : KX11Extras::windows ())
    {
      KWindowInfo info (w, NET::WMWindowType, NET::WM2DesktopFileName | NET::WM2GTKApplicationId | NET::WM2WindowClass);
      QString id = QString::fromUtf8 (info.desktopFileName ());
      if (id.isEmpty ())
        id = QString::fromUtf8 (info.gtkApplicationId ());
      if (id.isEmpty () && looksLikeAppId (QString::fromUtf8 (info.windowClassClass ())))
        id = QString::fromUtf8 (info.windowClassClass ());
      if (id.endsWith (QLatin1String (".desktop")))
        id.chop (8);
      if (!looksLikeAppId (id))
        continue;
      states[id] = qMax (states.value (id), w == active ? 2u : 1u);
    }
  for (auto it = states.constBegin (); it != states.constEnd (); ++it)
    func (it.key ().toUtf8 ().constData (), it.value (), user_data);
}

extern "C" LIMEN_QT_EXPORT int
limen_qt_watch_app_states (void (*changed) (void *user_data), void *user_data)
{
  static QTimer *pending = nullptr;
  static void (*func) (void *) = nullptr;
  static void *data = nullptr;
  if (!LimenQt::ensureApplication () || !KWindowSystem::isPlatformX11 ())
    return 0;
  func = changed;
  data = user_data;
  if (pending)
    return 1;
  /* Windows come in bursts (an app maps several): one signal per burst. */
  pending = new QTimer (QCoreApplication::instance ());
  pending->setSingleShot (true);
  pending->setInterval (200);
  QObject::connect (pending, &QTimer::timeout, [] { if (func) func (data); });
  auto kick = [] { pending->start (); };
  QObject::connect (KX11Extras::self (), &KX11Extras::windowAdded, pending, kick);
  QObject::connect (KX11Extras::self (), &KX11Extras::windowRemoved, pending, kick);
  QObject::connect (KX11Extras::self (), &KX11Extras::activeWindowChanged, pending, kick);
  return 1;
}
