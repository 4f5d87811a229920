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
#include <QGuiApplication>
#include <QIcon>
#include <QKeyEvent>
#include <QLabel>
#include <QListWidget>
#include <QMouseEvent>
#include <QPainter>
#include <QPointer>
#include <QPushButton>
#include <QScreen>
#include <QVBoxLayout>
#include <QWindow>

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

/* A region of the workspace the person draws: one dimmed full-screen layer per screen, a
 * rectangle dragged across them in workspace (logical) coordinates. Releasing the button
 * on a rectangle of some size, or Enter, chooses it; Escape gives up (an empty rectangle). */
class RegionSelection : public QObject
{
public:
  explicit RegionSelection (QObject *owner, std::function<void (const QRect &)> done);
  ~RegionSelection () override
  {
    for (const QPointer<QWidget> &layer : m_layers)
      delete layer.data ();
  }

  void setDone (std::function<void (const QRect &)> done) { m_done = std::move (done); }
  QRect rect () const { return m_rect; }
  void press (QScreen *screen, const QPoint &global)
  {
    m_pressed = true;
    m_screen = screen;
    m_origin = global;
    m_rect = QRect ();
    updateLayers ();
  }
  void move (const QPoint &global)
  {
    if (!m_pressed)
      return;
    /* From where the button went down to where the pointer is, that many pixels wide. */
    m_rect = QRect (QPoint (qMin (m_origin.x (), global.x ()), qMin (m_origin.y (), global.y ())),
                    QSize (qAbs (global.x () - m_origin.x ()), qAbs (global.y () - m_origin.y ())));
    updateLayers ();
  }
  void release ()
  {
    m_pressed = false;
    if (m_rect.width () >= 8 && m_rect.height () >= 8)
      finish (m_rect);
  }
  void finish (const QRect &rect)
  {
    auto done = std::move (m_done);
    m_done = nullptr;
    for (const QPointer<QWidget> &layer : m_layers)
      if (layer)
        layer->hide ();
    if (done)
      done (rect);
  }

private:
  void updateLayers ()
  {
    for (const QPointer<QWidget> &layer : m_layers)
      if (layer)
        layer->update ();
  }

  std::function<void (const QRect &)> m_done;
  QVector<QPointer<QWidget>> m_layers;
  QPoint m_origin;
  QRect m_rect;
  QPointer<QScreen> m_screen;   /* where the drag began */
  bool m_pressed = false;

public:
  /* "region:SCREEN:X,Y,W,H": the rectangle in device pixels from SCREEN's top left corner.
   * Qt's coordinates are scaled (QT_SCALE_FACTOR, the screen's scale) in ways only the
   * device pixels undo; the C side knows each screen's place and scale in the workspace. */
  QByteArray id (const QRect &r) const
  {
    if (!m_screen)
      return QByteArray ();
    const qreal dpr = m_screen->devicePixelRatio ();
    const QPoint at = r.topLeft () - m_screen->geometry ().topLeft ();
    return QStringLiteral ("region:%1:%2,%3,%4,%5").arg (m_screen->name ()).arg (qRound (at.x () * dpr))
      .arg (qRound (at.y () * dpr)).arg (qRound (r.width () * dpr)).arg (qRound (r.height () * dpr)).toUtf8 ();
  }
};

class RegionLayer : public QWidget
{
public:
  RegionLayer (RegionSelection *selection, QScreen *screen) : QWidget (nullptr), m_selection (selection), m_screen (screen)
  {
    setObjectName (QStringLiteral ("limen-region-layer"));
    setWindowTitle (i18nc ("@title:window", "Draw the Region to Share"));
    setWindowFlags (Qt::FramelessWindowHint | Qt::WindowStaysOnTopHint);
    setAttribute (Qt::WA_TranslucentBackground);
    setCursor (Qt::CrossCursor);
    setMouseTracking (true);
    setGeometry (screen->geometry ());
    create ();
    windowHandle ()->setScreen (screen);
    showFullScreen ();
    activateWindow ();
  }

protected:
  void paintEvent (QPaintEvent *) override
  {
    QPainter p (this);
    p.fillRect (rect (), QColor (0, 0, 0, 120));
    const QRect chosen = m_selection->rect ().translated (-m_screen->geometry ().topLeft ());
    const QString hint = i18nc ("@info", "Drag over the area to share. Escape cancels.");
    QFont f = font ();
    f.setPointSizeF (f.pointSizeF () * 1.4);
    p.setFont (f);
    p.setPen (Qt::white);
    p.drawText (rect ().adjusted (0, 40, 0, 0), Qt::AlignHCenter | Qt::AlignTop, hint);
    if (chosen.isValid () && chosen.intersects (rect ()))
      {
        p.setCompositionMode (QPainter::CompositionMode_Source);
        p.fillRect (chosen, Qt::transparent);
        p.setCompositionMode (QPainter::CompositionMode_SourceOver);
        p.setPen (QPen (palette ().color (QPalette::Highlight), 2));
        p.drawRect (chosen.adjusted (0, 0, -1, -1));
        /* The stream's size: device pixels, not Qt's scaled ones. */
        const qreal dpr = m_screen->devicePixelRatio ();
        const QString size = i18nc ("@item screen size in pixels", "%1 × %2",
                                    QString::number (qRound (chosen.width () * dpr)),
                                    QString::number (qRound (chosen.height () * dpr)));
        /* White on a dark plate: readable over whatever the region shows. */
        const QRect plate = p.fontMetrics ().boundingRect (size).adjusted (-6, -3, 6, 3)
                              .translated (chosen.topLeft () - p.fontMetrics ().boundingRect (size).topLeft () +
                                           QPoint (8, 6));
        p.fillRect (plate, QColor (0, 0, 0, 170));
        p.setPen (Qt::white);
        p.drawText (plate, Qt::AlignCenter, size);
      }
  }
  void mousePressEvent (QMouseEvent *e) override
  {
    if (e->button () == Qt::LeftButton)
      m_selection->press (m_screen, global (e->pos ()));
  }
  void mouseMoveEvent (QMouseEvent *e) override { m_selection->move (global (e->pos ())); }
  void mouseReleaseEvent (QMouseEvent *e) override
  {
    if (e->button () == Qt::LeftButton)
      m_selection->release ();
  }
  void keyPressEvent (QKeyEvent *e) override
  {
    if (e->key () == Qt::Key_Escape)
      m_selection->finish (QRect ());
    else if ((e->key () == Qt::Key_Return || e->key () == Qt::Key_Enter) && m_selection->rect ().isValid ())
      m_selection->finish (m_selection->rect ());
  }

private:
  /* A full-screen layer's origin is its screen's: Wayland tells no client where its window is. */
  QPoint global (const QPoint &local) const { return m_screen->geometry ().topLeft () + local; }

  RegionSelection *m_selection;
  QScreen *m_screen;
};

RegionSelection::RegionSelection (QObject *owner, std::function<void (const QRect &)> done)
  : QObject (owner), m_done (std::move (done))
{
  for (QScreen *screen : QGuiApplication::screens ())
    m_layers += new RegionLayer (this, screen);
}

class ScreenCastDialog : public _LimenQtDialog
{
public:
  ScreenCastDialog (const LimenQtScreenCastSpec *spec, LimenQtScreenCastDone done, void *user_data)
    : _LimenQtDialog (&spec->window), m_done (done), m_user_data (user_data)
  {
    const QString app = LimenQt::breakable (appName (spec->app_id));
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

  /* A live picture of source @id in place of its still; false once the dialog is done. */
  bool showPreview (const QByteArray &id, const QImage &image)
  {
    if (m_finished || isClosedByPortal () || !m_list)
      return false;
    for (int i = 0; i < m_list->count (); i++)
      {
        QListWidgetItem *item = m_list->item (i);
        if (item->data (Qt::UserRole).toByteArray () != id)
          continue;
        item->setData (LiveRole, true);   /* a still arriving late must not cover it */
        setPicture (item, image);
      }
    return true;
  }

protected:
  void onFinished (bool accepted) override
  {
    m_finished = true;
    QVector<QByteArray> ids;
    if (m_list)
      for (int i = 0; i < m_list->count (); i++)
        {
          QListWidgetItem *item = m_list->item (i);
          if (m_multiple ? item->checkState () == Qt::Checked : item->isSelected ())
            ids += item->data (Qt::UserRole).toByteArray ();
        }
    const int restore = m_restore && m_restore->isChecked () ? 1 : 0;
    const int region = ids.indexOf (QByteArrayLiteral ("region"));
    if (accepted && region >= 0)
      {
        /* The rectangle is drawn now, over the screens; the answer waits for it. */
        auto *selection = new RegionSelection (this, nullptr);
        selection->setDone ([this, selection, ids, region, restore] (const QRect &r) mutable {
          ids[region] = r.isNull () ? QByteArray () : selection->id (r);
          report (!ids[region].isEmpty (), ids, restore);
        });
        return;
      }
    report (accepted, ids, restore);
  }

private:
  void report (bool accepted, const QVector<QByteArray> &ids, int restore)
  {
    QVector<const char *> chosen;
    for (const QByteArray &id : ids)
      chosen += id.constData ();
    chosen += nullptr;
    complete ([&] {
      m_done (this, accepted ? LIMEN_QT_RESPONSE_OK : LIMEN_QT_RESPONSE_CANCELLED,
              accepted ? size_t (ids.size ()) : 0, chosen.data (), restore, m_user_data);
    });
  }


  void addItem (const QIcon &icon, const QString &text, const char *id)
  {
    auto *item = new QListWidgetItem (icon, text, m_list);
    item->setData (Qt::UserRole, QByteArray (id));
    if (m_multiple)
      item->setCheckState (m_list->count () == 1 ? Qt::Checked : Qt::Unchecked);
    /* The themed icon until KWin's still of the source arrives (it lives as long as the
     * dialog, which owns the capture), and the still until a live picture does (the C
     * side's previews, limen_qt_screencast_preview). */
    LimenQt::captureSource (this, str (id), [this, item] (const QImage &image) {
      if (!item->data (LiveRole).toBool ())
        setPicture (item, image);
    });
  }

  void setPicture (QListWidgetItem *item, const QImage &image)
  {
    const qreal dpr = devicePixelRatioF ();
    QPixmap picture = QPixmap::fromImage (image.scaled (m_list->iconSize () * dpr, Qt::KeepAspectRatio,
                                                        Qt::SmoothTransformation));
    picture.setDevicePixelRatio (dpr);
    item->setIcon (QIcon (picture));
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
    bool region = false;
    for (size_t i = 0; (spec->types & 1) && i < spec->n_screens; i++)
      {
        const LimenQtCastSource &s = spec->screens[i];
        /* The C side's "All screens" (the workspace as one region stream) has no name of its own. */
        const bool all = qstrcmp (s.id, "all-screens") == 0;
        if (qstrcmp (s.id, "region") == 0)
          {
            region = true;   /* last, after the things that are there already */
            continue;
          }
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
    if (region)
      addItem (QIcon::fromTheme (QStringLiteral ("select-rectangular"), screen),
               i18nc ("@item", "A region you draw") + QLatin1Char ('\n') +
                 i18nc ("@info below the item", "drawn over the screens after Share"),
               "region");
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

  static constexpr int LiveRole = Qt::UserRole + 1;
  QListWidget *m_list = nullptr;
  bool m_finished = false;
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

extern "C" LIMEN_QT_EXPORT int
limen_qt_screencast_preview (LimenQtDialog *dialog, const char *id, int width, int height, int stride,
                             const unsigned char *pixels)
{
  auto *picker = dynamic_cast<ScreenCastDialog *> (static_cast<_LimenQtDialog *> (dialog));
  if (!picker || !id || width <= 0 || height <= 0 || stride < width * 4 || !pixels)
    return 0;
  /* The pixels are the caller's only during the call: copied. */
  const QImage image = QImage (pixels, width, height, stride, QImage::Format_RGB32).copy ();
  return picker->showPreview (QByteArray (id), image) ? 1 : 0;
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
  /* A notification's body is markup to the server (KNotification strips it only for servers
   * without body-markup): the app's name, from its desktop file, goes in escaped. */
  const QString app = appName (app_id).toHtmlEscaped ();
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
