/* Limen — screen sharing: the picker of screens, windows or a new virtual screen, the
 * remote-control question, and the notification that says sharing runs (with Stop).
 * The streams themselves live on the C side; this only reports the person's choice.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KLocalizedString>
#include <KNotification>
#include <KService>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QIcon>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

using LimenQt::str;

namespace {

/* The app's name as its .desktop file gives it, else its id, else a generic phrase. */
QString appName (const char *app_id)
{
  QString id = str (app_id);
  if (id.isEmpty ())
    return i18nc ("@label the app asking when it has no name", "An application");
  KService::Ptr service = KService::serviceByDesktopName (id);
  if (service && !service->name ().isEmpty ())
    return service->name ();
  return id;
}

QStringList deviceNames (unsigned devices, bool clipboard)
{
  QStringList names;
  if (devices & 1)
    names += i18nc ("@item remote-control device", "Keyboard");
  if (devices & 2)
    names += i18nc ("@item remote-control device", "Pointer");
  if (devices & 4)
    names += i18nc ("@item remote-control device", "Touch screen");
  if (clipboard)
    names += i18nc ("@item remote-control device", "Clipboard");
  return names;
}

class ScreenCastDialog : public _LimenQtDialog
{
public:
  ScreenCastDialog (const LimenQtScreenCastSpec *spec, LimenQtScreenCastDone done, void *user_data)
    : _LimenQtDialog (&spec->window), m_done (done), m_user_data (user_data)
  {
    const QString app = appName (spec->app_id);
    const bool sharing = spec->types != 0;
    setObjectName (QStringLiteral ("limen-screencast-dialog"));
    setWindowTitle (sharing ? i18nc ("@title:window", "Screen Sharing") : i18nc ("@title:window", "Remote Control"));
    auto *col = new QVBoxLayout (this);
    auto *title = new QLabel (this);
    title->setObjectName (QStringLiteral ("title"));
    title->setTextFormat (Qt::PlainText);
    title->setWordWrap (true);
    if (sharing && spec->devices)
      title->setText (i18nc ("@label %1 app name", "%1 wants to see your screen and control your computer", app));
    else if (spec->devices)
      title->setText (i18nc ("@label %1 app name", "%1 wants to control your computer", app));
    else
      title->setText (i18nc ("@label %1 app name", "%1 wants to see your screen", app));
    QFont f = title->font ();
    f.setBold (true);
    f.setPointSizeF (f.pointSizeF () * 1.2);
    title->setFont (f);
    col->addWidget (title);
    if (sharing)
      addSources (spec, col);
    if (spec->devices || spec->clipboard)
      {
        auto *devices = new QLabel (i18nc ("@label followed by a list", "It asks for: %1",
                                           deviceNames (spec->devices, spec->clipboard).join (QStringLiteral (", "))),
                                    this);
        devices->setObjectName (QStringLiteral ("devices"));
        devices->setWordWrap (true);
        col->addWidget (devices);
      }
    if (spec->offer_restore)
      {
        m_restore = new QCheckBox (i18nc ("@option:check", "Allow restoring on future sessions"), this);
        m_restore->setObjectName (QStringLiteral ("restore"));
        /* Ticked to begin with, as in Plasma's own portal: untick to be asked next time. */
        m_restore->setChecked (true);
        col->addWidget (m_restore);
      }
    auto *buttons = new QDialogButtonBox (this);
    m_accept = buttons->addButton (sharing ? i18nc ("@action:button", "&Share") : i18nc ("@action:button", "&Allow"),
                                   QDialogButtonBox::AcceptRole);
    m_accept->setObjectName (QStringLiteral ("share"));
    m_accept->setDefault (true);
    auto *cancel = buttons->addButton (QDialogButtonBox::Cancel);
    cancel->setObjectName (QStringLiteral ("cancel"));
    connect (buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect (buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    col->addWidget (buttons);
    updateAccept ();
    setMinimumWidth (460);
  }

protected:
  void onFinished (bool accepted) override
  {
    QVector<QByteArray> ids;
    if (m_list)
      for (int i = 0; i < m_list->count (); i++)
        {
          QListWidgetItem *item = m_list->item (i);
          if (m_multiple ? item->checkState () == Qt::Checked : item->isSelected ())
            ids += item->data (Qt::UserRole).toByteArray ();
        }
    QVector<const char *> chosen;
    for (const QByteArray &id : ids)
      chosen += id.constData ();
    chosen += nullptr;
    const int restore = m_restore && m_restore->isChecked () ? 1 : 0;
    complete ([&] {
      m_done (this, accepted ? LIMEN_QT_RESPONSE_OK : LIMEN_QT_RESPONSE_CANCELLED,
              accepted ? size_t (ids.size ()) : 0, chosen.data (), restore, m_user_data);
    });
  }

private:
  void addItem (const QIcon &icon, const QString &text, const char *id)
  {
    auto *item = new QListWidgetItem (icon, text, m_list);
    item->setData (Qt::UserRole, QByteArray (id));
    if (m_multiple)
      item->setCheckState (m_list->count () == 1 ? Qt::Checked : Qt::Unchecked);
    /* The themed icon until KWin's still of the source arrives (it lives as long as the
     * dialog, which owns the capture). */
    LimenQt::captureSource (this, str (id), [this, item] (const QImage &image) {
      const qreal dpr = devicePixelRatioF ();
      QPixmap still = QPixmap::fromImage (image.scaled (m_list->iconSize () * dpr, Qt::KeepAspectRatio,
                                                        Qt::SmoothTransformation));
      still.setDevicePixelRatio (dpr);
      item->setIcon (QIcon (still));
    });
  }

  void addSources (const LimenQtScreenCastSpec *spec, QVBoxLayout *col)
  {
    m_multiple = spec->multiple;
    auto *label = new QLabel (m_multiple ? i18nc ("@label", "Choose what to share:")
                                         : i18nc ("@label", "Choose one thing to share:"), this);
    col->addWidget (label);
    m_list = new QListWidget (this);
    m_list->setObjectName (QStringLiteral ("sources"));
    m_list->setIconSize (QSize (96, 60));   /* room for a still of the screen or window */
    m_list->setSelectionMode (m_multiple ? QAbstractItemView::NoSelection : QAbstractItemView::SingleSelection);
    const QIcon screen = QIcon::fromTheme (QStringLiteral ("video-display"));
    for (size_t i = 0; (spec->types & 1) && i < spec->n_screens; i++)
      {
        const LimenQtCastSource &s = spec->screens[i];
        /* The C side's "All screens" (the workspace as one region stream) has no name of its own. */
        const bool all = qstrcmp (s.id, "all-screens") == 0;
        QString text = all ? i18nc ("@item the whole workspace as one source", "All screens")
                     : str (s.description).trimmed ().isEmpty () ? str (s.name)
                                                       : i18nc ("@item screen: %1 connector, %2 model", "%1 (%2)",
                                                                str (s.name), str (s.description));
        /* Sizes are not quantities: no digit grouping ("1,280"). */
        text += QLatin1Char ('\n') + i18nc ("@item screen size in pixels", "%1 × %2", QString::number (s.width),
                                            QString::number (s.height));
        addItem (screen, text, s.id);
      }
    for (size_t i = 0; (spec->types & 2) && i < spec->n_windows; i++)
      {
        const LimenQtCastSource &w = spec->windows[i];
        QIcon icon = QIcon::fromTheme (str (w.icon), QIcon::fromTheme (QStringLiteral ("window")));
        addItem (icon, str (w.name) + QLatin1Char ('\n') + str (w.description), w.id);
      }
    if (spec->types & 4)
      addItem (QIcon::fromTheme (QStringLiteral ("video-display-add"), screen),
               i18nc ("@item", "A new virtual screen"), "virtual");
    if (!m_multiple && m_list->count () > 0)
      m_list->setCurrentRow (0);
    connect (m_list, &QListWidget::itemChanged, this, [this] { updateAccept (); });
    connect (m_list, &QListWidget::itemSelectionChanged, this, [this] { updateAccept (); });
    connect (m_list, &QListWidget::itemDoubleClicked, this, [this] { if (m_accept->isEnabled ()) accept (); });
    m_list->setMinimumHeight (qMin (m_list->count (), 4) * 68 + 8);
    col->addWidget (m_list, 1);
  }

  /* Nothing to share, nothing to accept. */
  void updateAccept ()
  {
    if (!m_list || !m_accept)
      return;
    bool any = false;
    for (int i = 0; i < m_list->count (); i++)
      any = any || (m_multiple ? m_list->item (i)->checkState () == Qt::Checked : m_list->item (i)->isSelected ());
    m_accept->setEnabled (any);
  }

  QListWidget *m_list = nullptr;
  QCheckBox *m_restore = nullptr;
  QPushButton *m_accept = nullptr;
  bool m_multiple = false;
  LimenQtScreenCastDone m_done;
  void *m_user_data;
};

} // namespace

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_screencast_open (const LimenQtScreenCastSpec *spec, LimenQtScreenCastDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *dialog = new ScreenCastDialog (spec, done, user_data);
  dialog->adjustSize ();
  dialog->present ();
  return dialog;
}

/* The indicator is a persistent KNotification of our own "screencast" event: it must not
 * time out while the stream runs. */
struct _LimenQtCastIndicator
{
  QPointer<KNotification> notification;
  LimenQtCastStop stop;
  void *user_data;
};

extern "C" LIMEN_QT_EXPORT LimenQtCastIndicator *
limen_qt_cast_indicator_show (const char *app_id, int sharing, unsigned devices, LimenQtCastStop stop,
                              void *user_data)
{
  LimenQt::ensureCoreApplication ();
  const QString app = appName (app_id);
  auto *n = new KNotification (QStringLiteral ("screencast"), KNotification::Persistent);
  n->setComponentName (QStringLiteral ("limen"));
  n->setTitle (sharing ? i18nc ("@title notification", "Screen sharing") : i18nc ("@title notification", "Remote control"));
  n->setText (sharing && devices ? i18nc ("@info %1 app", "%1 sees your screen and controls your computer", app)
              : sharing ? i18nc ("@info %1 app", "%1 is sharing your screen", app)
                        : i18nc ("@info %1 app", "%1 is controlling your computer", app));
  n->setIconName (sharing ? QStringLiteral ("video-display") : QStringLiteral ("input-mouse"));
  if (app_id && *app_id)
    n->setHint (QStringLiteral ("desktop-entry"), str (app_id));
  n->setActions ({ i18nc ("@action:button stop sharing", "Stop") });
  /* Plasma keeps showing critical notifications in Do Not Disturb mode, which sharing
   * turns on (screencast-dnd.c): the person must still see how to stop. */
  n->setUrgency (KNotification::CriticalUrgency);
  auto *handle = new _LimenQtCastIndicator { n, stop, user_data };
  QObject::connect (n, QOverload<unsigned int>::of (&KNotification::activated), n, [handle] (unsigned int index) {
    if (index == 1 && handle->stop)
      {
        LimenQtCastStop stop = handle->stop;
        handle->stop = nullptr;   /* once */
        stop (handle, handle->user_data);
      }
  });
  n->sendEvent ();
  return handle;
}

extern "C" LIMEN_QT_EXPORT void
limen_qt_cast_indicator_close (LimenQtCastIndicator *handle)
{
  if (!handle)
    return;
  if (handle->notification)
    handle->notification->close ();   /* KNotification deletes itself */
  delete handle;
}
