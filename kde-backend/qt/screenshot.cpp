/* Limen — screenshots and colour picking: KWin's org.kde.KWin.ScreenShot2 over QtDBus,
 * the X root window when KWin is not there, the screenshot dialog and the picker overlay.
 *
 * KWin answers a capture with the image's geometry ({format, width, height, stride})
 * and writes the raw pixels into the pipe we hand it, from a thread of its own; so the
 * pipe is read with a socket notifier until stride × height bytes are in, never with
 * a blocking read.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KLocalizedString>
#include <KWindowSystem>
#include <KX11Extras>
#include <QComboBox>
#include <QCursor>
#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QDBusUnixFileDescriptor>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFormLayout>
#include <QGuiApplication>
#include <QImage>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPointer>
#include <QPushButton>
#include <QScreen>
#include <QSocketNotifier>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#include <xcb/xcb.h>

using LimenQt::str;

namespace {

/* Window: the person clicks one (KWin); ActiveWindow: the focused one, no question;
 * NamedScreen, WindowById: the screen or window the target names (picker thumbnails). */
enum class Mode { Workspace, Screen, Window, ActiveWindow, NamedScreen, WindowById };

using CaptureDone = std::function<void (const QImage &image, const QString &error)>;

/* One capture from KWin: the reply gives the geometry, the pipe the pixels. */
class KWinCapture : public QObject
{
public:
  KWinCapture (QObject *parent, CaptureDone done) : QObject (parent), m_done (std::move (done)) {}
  ~KWinCapture () override
  {
    if (m_fd >= 0)
      ::close (m_fd);
  }

  void start (Mode mode, const QString &target = QString ())
  {
    int fds[2];
    if (pipe2 (fds, O_CLOEXEC | O_NONBLOCK) < 0)
      {
        finish (QImage (), QStringLiteral ("pipe: ") + QString::fromLocal8Bit (strerror (errno)));
        return;
      }
    m_fd = fds[0];
    QVariantMap options { { QStringLiteral ("include-cursor"), false },
                          { QStringLiteral ("native-resolution"), true },
                          { QStringLiteral ("include-decoration"), true } };
    QString method;
    QVariantList args;
    switch (mode)
      {
      case Mode::Workspace:
        method = QStringLiteral ("CaptureWorkspace");
        break;
      case Mode::Screen:
        method = QStringLiteral ("CaptureActiveScreen");
        break;
      case Mode::Window:
        /* The user clicks the window (kind 0); our own dialog is hidden by then. */
        method = QStringLiteral ("CaptureInteractive");
        args << QVariant::fromValue (uint (0));
        break;
      case Mode::ActiveWindow:
        method = QStringLiteral ("CaptureActiveWindow");
        break;
      case Mode::NamedScreen:
        method = QStringLiteral ("CaptureScreen");
        args << target;
        break;
      case Mode::WindowById:
        method = QStringLiteral ("CaptureWindow");
        args << target;
        break;
      }
    args << options << QVariant::fromValue (QDBusUnixFileDescriptor (fds[1]));
    ::close (fds[1]);
    QDBusMessage msg = QDBusMessage::createMethodCall (QStringLiteral ("org.kde.KWin"),
                                                       QStringLiteral ("/org/kde/KWin/ScreenShot2"),
                                                       QStringLiteral ("org.kde.KWin.ScreenShot2"), method);
    msg.setArguments (args);
    m_notifier = new QSocketNotifier (m_fd, QSocketNotifier::Read, this);
    connect (m_notifier, &QSocketNotifier::activated, this, [this] { readSome (); });
    /* CaptureInteractive waits for the user; the others answer at once. */
    auto *watcher = new QDBusPendingCallWatcher (QDBusConnection::sessionBus ().asyncCall (msg, mode == Mode::Window ? 120000 : 10000), this);
    connect (watcher, &QDBusPendingCallWatcher::finished, this, [this] (QDBusPendingCallWatcher *w) {
      QDBusPendingReply<QVariantMap> reply = *w;
      w->deleteLater ();
      if (reply.isError ())
        {
          finish (QImage (), reply.error ().name () + QStringLiteral (": ") + reply.error ().message ());
          return;
        }
      m_meta = reply.value ();
      m_have_meta = true;
      checkComplete ();
    });
  }

private:
  void readSome ()
  {
    char buf[65536];
    for (;;)
      {
        ssize_t n = ::read (m_fd, buf, sizeof buf);
        if (n > 0)
          {
            m_data.append (buf, int (n));
            continue;
          }
        if (n == 0)
          {
            m_eof = true;
            m_notifier->setEnabled (false);
          }
        else if (errno == EINTR)
          continue;
        else if (errno != EAGAIN)
          {
            m_eof = true;
            m_notifier->setEnabled (false);
          }
        break;
      }
    checkComplete ();
  }

  void checkComplete ()
  {
    if (!m_have_meta || m_finished)
      return;
    const int width = m_meta.value (QStringLiteral ("width")).toInt ();
    const int height = m_meta.value (QStringLiteral ("height")).toInt ();
    const int stride = m_meta.value (QStringLiteral ("stride")).toInt ();
    const int format = m_meta.value (QStringLiteral ("format")).toInt ();
    const QString type = m_meta.value (QStringLiteral ("type"), QStringLiteral ("raw")).toString ();
    if (type != QLatin1String ("raw") || width <= 0 || height <= 0 || stride < width * 4 ||
        format <= QImage::Format_Invalid || format >= QImage::NImageFormats || height > 65536 || stride > (1 << 20))
      {
        finish (QImage (), QStringLiteral ("KWin sent an image description we cannot use"));
        return;
      }
    const qint64 need = qint64 (stride) * height;
    if (m_data.size () >= need)
      {
        QImage image (reinterpret_cast<const uchar *> (m_data.constData ()), width, height, stride,
                      QImage::Format (format));
        finish (image.copy (), QString ());
      }
    else if (m_eof)
      finish (QImage (), QStringLiteral ("KWin's pipe closed after %1 of %2 bytes").arg (m_data.size ()).arg (need));
  }

  void finish (const QImage &image, const QString &error)
  {
    if (m_finished)
      return;
    m_finished = true;
    CaptureDone done = m_done;
    deleteLater ();
    done (image, error);
  }

  CaptureDone m_done;
  int m_fd = -1;
  QSocketNotifier *m_notifier = nullptr;
  QByteArray m_data;
  QVariantMap m_meta;
  bool m_have_meta = false;
  bool m_eof = false;
  bool m_finished = false;
};

/* Without KWin on X11: read the root window (or one window) straight from the server.
 * QScreen::grabWindow(0) copies from the root without its background here (Xvfb), so
 * an empty desktop would come out black. */
QImage grabX11Drawable (uint32_t drawable, QRect area)
{
  xcb_connection_t *c = xcb_connect (nullptr, nullptr);
  QImage out;
  if (xcb_connection_has_error (c))
    {
      xcb_disconnect (c);
      return out;
    }
  if (area.isEmpty ())
    {
      xcb_get_geometry_reply_t *geo = xcb_get_geometry_reply (c, xcb_get_geometry (c, drawable), nullptr);
      if (geo)
        area = QRect (0, 0, geo->width, geo->height);
      free (geo);
    }
  xcb_get_image_reply_t *img = area.isEmpty () ? nullptr
    : xcb_get_image_reply (c, xcb_get_image (c, XCB_IMAGE_FORMAT_Z_PIXMAP, drawable, int16_t (area.x ()),
                                             int16_t (area.y ()), uint16_t (area.width ()),
                                             uint16_t (area.height ()), ~0u), nullptr);
  /* Depth 24/32 in Z format is 32 bits per pixel, BGRX in memory: RGB32. */
  if (img && (img->depth == 24 || img->depth == 32) &&
      xcb_get_image_data_length (img) >= area.width () * area.height () * 4)
    out = QImage (xcb_get_image_data (img), area.width (), area.height (), area.width () * 4,
                  QImage::Format_RGB32).copy ();
  free (img);
  xcb_disconnect (c);
  return out;
}

QImage grabX11 (Mode mode)
{
  xcb_connection_t *c = xcb_connect (nullptr, nullptr);
  uint32_t root = 0, focus = 0;
  if (!xcb_connection_has_error (c))
    {
      const xcb_setup_t *setup = xcb_get_setup (c);
      root = xcb_setup_roots_iterator (setup).data->root;
      /* Without a window manager there is no _NET_ACTIVE_WINDOW: the focus is the active one. */
      xcb_get_input_focus_reply_t *f = xcb_get_input_focus_reply (c, xcb_get_input_focus (c), nullptr);
      if (f && f->focus != XCB_NONE && f->focus != XCB_INPUT_FOCUS_POINTER_ROOT && f->focus != root)
        focus = f->focus;
      free (f);
    }
  xcb_disconnect (c);
  if (!root)
    return QImage ();
  if (mode == Mode::Window || mode == Mode::ActiveWindow)
    {
      WId active = KX11Extras::activeWindow ();
      if (!active)
        active = focus;
      if (active)
        {
          QImage image = grabX11Drawable (uint32_t (active), QRect ());
          if (!image.isNull ())
            return image;
        }
    }
  if (mode == Mode::Screen)
    {
      QScreen *screen = QGuiApplication::screenAt (QCursor::pos ());
      if (!screen)
        screen = QGuiApplication::primaryScreen ();
      if (screen)
        {
          const QRect g = screen->geometry ();
          const qreal dpr = screen->devicePixelRatio ();
          return grabX11Drawable (root, QRect (qRound (g.x () * dpr), qRound (g.y () * dpr),
                                               qRound (g.width () * dpr), qRound (g.height () * dpr)));
        }
    }
  /* The whole X root spans every screen. */
  return grabX11Drawable (root, QRect ());
}

/* Capture with KWin when it serves ScreenShot2, else (X11) the root window. */
void capture (QObject *context, Mode mode, const CaptureDone &done)
{
  QDBusConnectionInterface *bus = QDBusConnection::sessionBus ().interface ();
  const bool kwin = bus && bus->isServiceRegistered (QStringLiteral ("org.kde.KWin")).value ();
  auto fallback = [done, mode] (const QString &why) {
    if (!KWindowSystem::isPlatformX11 ())
      {
        done (QImage (), why);
        return;
      }
    qWarning ("limen-kde: screenshot: %s; grabbing the X root window instead", qPrintable (why));
    QImage image = grabX11 (mode);
    done (image, image.isNull () ? QStringLiteral ("grabbing the X root window failed") : QString ());
  };
  if (!kwin)
    {
      fallback (QStringLiteral ("KWin is not running"));
      return;
    }
  QPointer<QObject> guard (context);
  auto *job = new KWinCapture (context, [guard, done, fallback] (const QImage &image, const QString &error) {
    if (!guard)
      return;
    if (image.isNull ())
      {
        qWarning ("limen-kde: KWin's ScreenShot2 failed: %s", qPrintable (error));
        /* NoAuthorized: limen-kde's .desktop file (X-KDE-DBUS-Restricted-Interfaces) is
         * missing; an X server still lets us read the root window. */
        fallback (error);
        return;
      }
    qInfo ("limen-kde: screenshot taken through KWin's ScreenShot2 (%dx%d)", image.width (), image.height ());
    done (image, QString ());
  });
  job->start (mode);
}

} // namespace

/* Thumbnails ask KWin only (no X fallback: the picker lists Wayland screens and windows). */
void
LimenQt::captureSource (QObject *context, const QString &id, const std::function<void (const QImage &)> &done)
{
  const bool screen = id.startsWith (QLatin1String ("screen:"));
  const bool workspace = id == QLatin1String ("all-screens");
  if (!screen && !workspace && !id.startsWith (QLatin1String ("window:")))
    return;
  auto *job = new KWinCapture (context, [done, id] (const QImage &image, const QString &error) {
    if (image.isNull ())
      qCDebug (LIMEN_SHIM) << "no thumbnail of" << id << ":" << error;
    else
      done (image);
  });
  job->start (workspace ? Mode::Workspace : screen ? Mode::NamedScreen : Mode::WindowById, id.mid (7));
}

namespace {

/* Save as a PNG with a name nobody else has; the file:// URI or empty. */
QString savePng (const QImage &image, const char *folder_arg)
{
  QString folder = folder_arg && *folder_arg ? str (folder_arg)
                                             : QStandardPaths::writableLocation (QStandardPaths::PicturesLocation);
  if (folder.isEmpty ())
    folder = QDir::homePath () + QStringLiteral ("/Pictures");
  if (!QDir ().mkpath (folder))
    return QString ();
  const QString stem = i18nc ("file name of a screenshot; %1 is date and time", "Screenshot_%1",
                              QDateTime::currentDateTime ().toString (QStringLiteral ("yyyyMMdd_HHmmss")));
  for (int i = 0; i < 1000; i++)
    {
      QString path = folder + QLatin1Char ('/') + stem + (i ? QStringLiteral ("-%1").arg (i) : QString ()) +
                     QStringLiteral (".png");
      QFile file (path);
      /* NewOnly: O_EXCL, so two screenshots in the same second never overwrite. */
      if (!file.open (QIODevice::WriteOnly | QIODevice::NewOnly))
        {
          if (file.exists ())
            continue;
          return QString ();
        }
      if (!image.save (&file, "PNG"))
        {
          file.remove ();
          return QString ();
        }
      return QUrl::fromLocalFile (path).toString (QUrl::FullyEncoded);
    }
  return QString ();
}

/* A frozen full-screen picture of the screen: click picks a pixel, drag picks a region. */
class FrozenOverlay : public QWidget
{
public:
  enum Purpose { PickPixel, PickRegion };

  FrozenOverlay (const QImage &image, Purpose purpose, QWidget *parent)
    : QWidget (parent, Qt::Window | Qt::FramelessWindowHint | Qt::WindowStaysOnTopHint | Qt::BypassWindowManagerHint),
      m_image (image), m_purpose (purpose)
  {
    setObjectName (QStringLiteral ("limen-frozen-overlay"));
    setWindowTitle (purpose == PickPixel ? i18nc ("@title:window", "Pick a Colour")
                                         : i18nc ("@title:window", "Select a Region"));
    setCursor (Qt::CrossCursor);
    setMouseTracking (true);
    QRect all;
    for (QScreen *s : QGuiApplication::screens ())
      all |= s->geometry ();
    setGeometry (all);
  }

  std::function<void (QPoint pixel)> picked;
  std::function<void (QRect region)> selected;
  std::function<void ()> cancelled;

  void start ()
  {
    show ();
    raise ();
    activateWindow ();
    grabKeyboard ();
  }

protected:
  void paintEvent (QPaintEvent *) override
  {
    QPainter p (this);
    p.drawImage (rect (), m_image);
    if (m_purpose == PickRegion && m_dragging)
      {
        QRect r = QRect (m_from, m_to).normalized ();
        p.fillRect (rect (), QColor (0, 0, 0, 80));
        p.drawImage (r, m_image, toImage (r));
        p.setPen (QPen (palette ().highlight ().color (), 2));
        p.drawRect (r);
      }
    else
      {
        /* On a dark plate: the screen below may be any colour. */
        const QString hint = m_purpose == PickPixel ? i18n ("Click to pick a colour; Escape cancels.")
                                                    : i18n ("Drag to select a region; Escape cancels.");
        QRect box = fontMetrics ().boundingRect (hint).adjusted (-12, -8, 12, 8);
        box.moveCenter (QPoint (width () / 2, 60));
        p.setRenderHint (QPainter::Antialiasing);
        p.setPen (Qt::NoPen);
        p.setBrush (QColor (0, 0, 0, 170));
        p.drawRoundedRect (box, 6, 6);
        p.setPen (Qt::white);
        p.drawText (box, Qt::AlignCenter, hint);
      }
  }

  void mousePressEvent (QMouseEvent *e) override
  {
    if (e->button () != Qt::LeftButton)
      return;
    if (m_purpose == PickPixel)
      {
        QPoint pixel = toImage (QRect (e->pos (), QSize (1, 1))).topLeft ();
        finish ([this, pixel] { if (picked) picked (pixel); });
        return;
      }
    m_dragging = true;
    m_from = m_to = e->pos ();
    update ();
  }

  void mouseMoveEvent (QMouseEvent *e) override
  {
    if (m_dragging)
      {
        m_to = e->pos ();
        update ();
      }
  }

  void mouseReleaseEvent (QMouseEvent *e) override
  {
    if (!m_dragging || e->button () != Qt::LeftButton)
      return;
    m_dragging = false;
    /* The release point is the first pixel outside, as a drag from 0 to 10 is 10 wide
     * (QRect (QPoint, QPoint) would include it). */
    const QPoint to = e->pos ();
    QRect r = toImage (QRect (QPoint (qMin (m_from.x (), to.x ()), qMin (m_from.y (), to.y ())),
                              QSize (qAbs (to.x () - m_from.x ()), qAbs (to.y () - m_from.y ()))));
    if (r.width () < 2 || r.height () < 2)
      {
        update ();
        return;
      }
    finish ([this, r] { if (selected) selected (r); });
  }

  void keyPressEvent (QKeyEvent *e) override
  {
    if (e->key () == Qt::Key_Escape)
      finish ([this] { if (cancelled) cancelled (); });
  }

private:
  /* Widget coordinates → image pixels (the capture is at native resolution). */
  QRect toImage (const QRect &r) const
  {
    const double sx = double (m_image.width ()) / qMax (1, width ());
    const double sy = double (m_image.height ()) / qMax (1, height ());
    QRect out (int (r.x () * sx), int (r.y () * sy), qMax (1, int (r.width () * sx)), qMax (1, int (r.height () * sy)));
    return out.intersected (m_image.rect ());
  }

  void finish (const std::function<void ()> &report)
  {
    releaseKeyboard ();
    hide ();
    /* Report from the event loop, not from inside our own event handler: the receiver
     * may delete us. */
    QTimer::singleShot (0, this, report);
  }

  QImage m_image;
  Purpose m_purpose;
  bool m_dragging = false;
  QPoint m_from, m_to;
};

/* Non-interactive screenshots are a dialog that is never shown: the same handle,
 * Close and reporting as every other request. */
class ScreenshotDialog : public _LimenQtDialog
{
public:
  ScreenshotDialog (const LimenQtScreenshotSpec *spec, LimenQtScreenshotDone done, void *user_data)
    : _LimenQtDialog (&spec->window), m_done (done), m_user_data (user_data),
      m_folder (spec->folder ? QByteArray (spec->folder) : QByteArray ()), m_target (spec->target)
  {
    setObjectName (QStringLiteral ("limen-screenshot-dialog"));
    if (!spec->interactive)
      return;
    setWindowTitle (i18nc ("@title:window", "Screenshot"));
    auto *layout = new QVBoxLayout (this);
    m_preview = new QLabel (this);
    m_preview->setObjectName (QStringLiteral ("preview"));
    m_preview->setAlignment (Qt::AlignCenter);
    /* At 200% on a small screen a fixed 480×300 preview pushes the buttons off the
     * screen: the preview takes at most half the screen's height. */
    const QScreen *screen = QGuiApplication::primaryScreen ();
    const QRect avail = screen ? screen->availableGeometry () : QRect (0, 0, 1280, 800);
    m_previewSize = QSize (qMin (480, avail.width () * 2 / 3), qMin (300, avail.height () / 2));
    m_preview->setMinimumSize (m_previewSize);
    m_preview->setFrameShape (QFrame::StyledPanel);
    layout->addWidget (m_preview, 1);

    auto *form = new QFormLayout;
    m_mode = new QComboBox (this);
    m_mode->setObjectName (QStringLiteral ("mode"));
    m_mode->addItem (i18nc ("@item:inlistbox screenshot area", "Whole screen"), 0);
    m_mode->addItem (i18nc ("@item:inlistbox screenshot area", "Current window"), 1);
    m_mode->addItem (i18nc ("@item:inlistbox screenshot area", "Region"), 2);
    auto *modeLabel = new QLabel (i18nc ("@label:listbox", "&Area:"), this);
    modeLabel->setBuddy (m_mode);
    form->addRow (modeLabel, m_mode);
    /* The app's target preselects the mode; the person may still change it. */
    m_mode->setCurrentIndex (m_target == 4 ? 2 : m_target == 2 || m_target == 8 ? 1 : 0);
    qInfo ("limen-kde: screenshot dialog mode: %s", qPrintable (m_mode->currentText ()));
    m_delay = new QSpinBox (this);
    m_delay->setObjectName (QStringLiteral ("delay"));
    m_delay->setRange (0, 60);
    m_delay->setSuffix (i18nc ("@item:valuesuffix seconds", " s"));
    auto *delayLabel = new QLabel (i18nc ("@label:spinbox", "&Delay:"), this);
    delayLabel->setBuddy (m_delay);
    form->addRow (delayLabel, m_delay);
    layout->addLayout (form);

    auto *buttons = new QDialogButtonBox (this);
    m_take = buttons->addButton (i18nc ("@action:button", "&Take New Screenshot"), QDialogButtonBox::ActionRole);
    m_take->setObjectName (QStringLiteral ("take"));
    m_save = buttons->addButton (QDialogButtonBox::Save);
    m_save->setObjectName (QStringLiteral ("save"));
    m_save->setDefault (true);
    m_save->setEnabled (false);
    buttons->addButton (QDialogButtonBox::Cancel)->setObjectName (QStringLiteral ("cancel"));
    connect (m_take, &QPushButton::clicked, this, [this] { retake (); });
    connect (buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect (buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget (buttons);
  }

  /* Non-interactive: capture what the target names, save, report. An area is the one
   * target that still asks: the person drags it out on a frozen picture. */
  void runOnce ()
  {
    const Mode mode = m_target == 2 ? Mode::Window : m_target == 8 ? Mode::ActiveWindow : Mode::Workspace;
    capture (this, mode, [this] (const QImage &image, const QString &error) {
      if (isClosedByPortal ())
        return;
      if (m_target != 4 || image.isNull ())
        {
          saveAndReport (image, error);
          return;
        }
      auto *overlay = new FrozenOverlay (image, FrozenOverlay::PickRegion, this);
      overlay->selected = [this, image, overlay] (QRect r) {
        overlay->deleteLater ();
        saveAndReport (image.copy (r), QString ());
      };
      overlay->cancelled = [this, overlay] {
        overlay->deleteLater ();
        complete ([this] { m_done (this, LIMEN_QT_RESPONSE_CANCELLED, nullptr, m_user_data); });
      };
      overlay->start ();
    });
  }

  /* Interactive: a first capture of the whole screen for the preview, then the dialog. */
  void runInteractive ()
  {
    capture (this, Mode::Workspace, [this] (const QImage &image, const QString &error) {
      if (isClosedByPortal ())
        return;
      setImage (image, error);
      adjustSize ();
      present ();
    });
  }

  /* For tests: the image the dialog would save. */
  QImage image () const { return m_image; }

protected:
  void onFinished (bool accepted) override
  {
    if (!accepted)
      {
        complete ([this] { m_done (this, LIMEN_QT_RESPONSE_CANCELLED, nullptr, m_user_data); });
        return;
      }
    saveAndReport (m_image, m_error);
  }

private:
  void saveAndReport (const QImage &image, const QString &error)
  {
    if (image.isNull ())
      {
        qWarning ("limen-kde: no screenshot: %s", qPrintable (error));
        complete ([this] { m_done (this, LIMEN_QT_RESPONSE_OTHER, nullptr, m_user_data); });
        return;
      }
    QString uri = savePng (image, m_folder.isEmpty () ? nullptr : m_folder.constData ());
    if (uri.isEmpty ())
      qWarning ("limen-kde: the screenshot could not be saved");
    QByteArray utf8 = uri.toUtf8 ();
    complete ([&] {
      m_done (this, uri.isEmpty () ? LIMEN_QT_RESPONSE_OTHER : LIMEN_QT_RESPONSE_OK,
              uri.isEmpty () ? nullptr : utf8.constData (), m_user_data);
    });
  }

  void setImage (const QImage &image, const QString &error)
  {
    m_image = image;
    m_error = error;
    if (image.isNull ())
      m_preview->setText (i18n ("No screenshot could be taken."));
    else
      {
        /* Scaled in device pixels, so the preview is sharp at 200%. */
        const qreal dpr = m_preview->devicePixelRatioF ();
        QPixmap pixmap = QPixmap::fromImage (image.scaled (m_previewSize * dpr, Qt::KeepAspectRatio,
                                                           Qt::SmoothTransformation));
        pixmap.setDevicePixelRatio (dpr);
        m_preview->setPixmap (pixmap);
      }
    m_save->setEnabled (!image.isNull ());
  }

  void retake ()
  {
    const int mode = m_mode->currentData ().toInt ();
    hide ();
    /* Give the compositor time to take our window off the screen. */
    QTimer::singleShot (m_delay->value () * 1000 + 300, this, [this, mode] {
      if (isClosedByPortal ())
        return;
      if (mode == 2)
        {
          capture (this, Mode::Workspace, [this] (const QImage &image, const QString &error) {
            if (isClosedByPortal ())
              return;
            if (image.isNull ())
              {
                setImage (image, error);
                show ();
                return;
              }
            auto *overlay = new FrozenOverlay (image, FrozenOverlay::PickRegion, this);
            auto back = [this, overlay] { overlay->deleteLater (); show (); raise (); activateWindow (); };
            overlay->selected = [this, image, back] (QRect r) { setImage (image.copy (r), QString ()); back (); };
            overlay->cancelled = back;
            overlay->start ();
          });
          return;
        }
      capture (this, mode == 1 ? Mode::Window : Mode::Workspace, [this] (const QImage &image, const QString &error) {
        if (isClosedByPortal ())
          return;
        setImage (image, error);
        show ();
        raise ();
        activateWindow ();
      });
    });
  }

  LimenQtScreenshotDone m_done;
  void *m_user_data;
  QByteArray m_folder;
  unsigned m_target = 0;
  QImage m_image;
  QString m_error;
  QLabel *m_preview = nullptr;
  QSize m_previewSize;
  QComboBox *m_mode = nullptr;
  QSpinBox *m_delay = nullptr;
  QPushButton *m_take = nullptr;
  QPushButton *m_save = nullptr;
};

/* PickColor: never shown itself; owns the overlay. */
class PickColorDialog : public _LimenQtDialog
{
public:
  PickColorDialog (const LimenQtWindow *window, LimenQtPickColorDone done, void *user_data)
    : _LimenQtDialog (window), m_done (done), m_user_data (user_data)
  {
    setObjectName (QStringLiteral ("limen-pick-color"));
  }

  ~PickColorDialog () override { delete m_overlay; }

  void run ()
  {
    capture (this, Mode::Workspace, [this] (const QImage &image, const QString &error) {
      if (isClosedByPortal ())
        return;
      if (image.isNull ())
        {
          qWarning ("limen-kde: cannot pick a colour: %s", qPrintable (error));
          complete ([this] { m_done (this, LIMEN_QT_RESPONSE_OTHER, nullptr, m_user_data); });
          return;
        }
      m_overlay = new FrozenOverlay (image, FrozenOverlay::PickPixel, nullptr);
      m_overlay->picked = [this, image] (QPoint pixel) {
        QColor c = image.pixelColor (pixel);
        qInfo ("limen-kde: picked pixel %d,%d of %dx%d: %s", pixel.x (), pixel.y (), image.width (), image.height (),
               qPrintable (c.name ()));
        const double rgb[3] = { c.redF (), c.greenF (), c.blueF () };
        complete ([&] { m_done (this, LIMEN_QT_RESPONSE_OK, rgb, m_user_data); });
      };
      m_overlay->cancelled = [this] {
        complete ([this] { m_done (this, LIMEN_QT_RESPONSE_CANCELLED, nullptr, m_user_data); });
      };
      m_overlay->start ();
    });
  }

protected:
  /* Never shown, so never finished by Qt: the overlay reports. */
  void onFinished (bool) override {}

private:
  LimenQtPickColorDone m_done;
  void *m_user_data;
  FrozenOverlay *m_overlay = nullptr;
};

} // namespace

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_screenshot_open (const LimenQtScreenshotSpec *spec, LimenQtScreenshotDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *dialog = new ScreenshotDialog (spec, done, user_data);
  /* Start from the event loop: the caller must have the handle before any report. */
  const bool interactive = spec->interactive;
  QTimer::singleShot (0, dialog, [dialog, interactive] {
    if (dialog->isClosedByPortal ())
      return;
    if (interactive)
      dialog->runInteractive ();
    else
      dialog->runOnce ();
  });
  return dialog;
}

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_pick_color_open (const LimenQtWindow *window, LimenQtPickColorDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *dialog = new PickColorDialog (window, done, user_data);
  QTimer::singleShot (0, dialog, [dialog] {
    if (!dialog->isClosedByPortal ())
      dialog->run ();
  });
  return dialog;
}
