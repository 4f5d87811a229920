/* Limen — liblimen-qt: the application object, parent windows, the dialog base.
 *
 * The QApplication is created lazily in the first call that needs a widget and never
 * runs exec(): Qt 5 on Linux dispatches through GLib's default main context, which the
 * backend's g_main_loop already iterates.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KIconTheme>
#include <KLocalizedString>
#include <KWindowSystem>
#include <QApplication>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QMouseEvent>
#include <QIcon>
#include <QLabel>
#include <QOpenGLContext>
#include <QScreen>
#include <QThread>
#include <QTimer>
#include <QWindow>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <libintl.h>
#include <xcb/xcb.h>

namespace {

int app_argc = 1;
char app_name[] = "limen-kde";
char *app_argv[] = { app_name, nullptr };

/* Creating a QApplication with no reachable display aborts the process, so look first,
 * every time until the application exists: the display may come and go. */
const char *probeDisplay ()
{
  const char *platform = getenv ("QT_QPA_PLATFORM");
  if (platform && *platform && strncmp (platform, "xcb", 3) != 0)
    return nullptr;
  const char *wayland = getenv ("WAYLAND_DISPLAY");
  if (wayland && *wayland && !(platform && *platform))
    return nullptr;
  const char *display = getenv ("DISPLAY");
  if (!display || !*display)
    return "no DISPLAY or WAYLAND_DISPLAY";
  xcb_connection_t *c = xcb_connect (nullptr, nullptr);
  bool bad = xcb_connection_has_error (c);
  xcb_disconnect (c);
  return bad ? "the X display cannot be reached" : nullptr;
}

void setupTranslations ()
{
  KLocalizedString::setApplicationDomain ("limen");
  /* Use the catalogue directory the C side bound, so the build tree and an installed
   * limen-kde find the same translations for C and Qt strings. */
  const char *dir = bindtextdomain ("limen", nullptr);
  if (dir && *dir)
    KLocalizedString::addDomainLocaleDir ("limen", QString::fromUtf8 (dir));
}

int open_dialogs = 0;
QTimer *input_pump = nullptr;

/* The glib event dispatcher of the xcb platform processes X events with the flags of
 * the last processEvents() call. Under our g_main_loop_run() nothing calls it except
 * nested loops such as KJob::exec(), which KFileWidget runs with
 * ExcludeUserInputEvents — after which keyboard and mouse input would stay queued for
 * good. While a dialog is open, a plain processEvents() now and then (from the top-level
 * loop, never from inside a D-Bus handler) restores AllEvents. */
void pumpInput ()
{
  if (!input_pump)
    {
      input_pump = new QTimer (QCoreApplication::instance ());
      input_pump->setInterval (50);
      QObject::connect (input_pump, &QTimer::timeout, [] {
        /* Once more after the last dialog closed: what closing it asked of the display
         * server (on Wayland, destroying its surface) leaves Qt's buffer only when the
         * dispatcher flushes, at the start of a processEvents(). Without this turn a
         * closed picker stayed on screen until the next input reached limen-kde. */
        if (open_dialogs == 0)
          input_pump->stop ();
        QCoreApplication::processEvents (QEventLoop::AllEvents);
      });
    }
  if (!input_pump->isActive ())
    input_pump->start ();
  QTimer::singleShot (0, QCoreApplication::instance (), [] { QCoreApplication::processEvents (QEventLoop::AllEvents); });
}

} // namespace

namespace LimenQt {

bool ensureApplication (const char **reason)
{
  if (qobject_cast<QApplication *> (QCoreApplication::instance ()))
    return true;
  if (QCoreApplication::instance ())
    {
      if (reason)
        *reason = "started without a display";
      return false;
    }
  const char *why = probeDisplay ();
  if (why)
    {
      if (reason)
        *reason = why;
      return false;
    }
  /* Session management would make us part of the user's session restore (ksmserver would
   * start limen-kde at the next login); the C side's own XSMP client handles logout. */
  QCoreApplication::setAttribute (Qt::AA_DisableSessionManager);
  QGuiApplication::setFallbackSessionManagementEnabled (false);
  QApplication::setAttribute (Qt::AA_UseHighDpiPixmaps);
  /* No dialog of ours draws with OpenGL, but Qt 5's xcb plugin gives every widget window
   * a GLX visual, and picking one loads Mesa (and LLVM for llvmpipe) on the first show():
   * ~45 ms of the first dialog and ~10 MiB. "none" keeps the windows plain X ones. Qt
   * reads the variable once, when its GL integration is first asked for, which
   * supportsThreadedOpenGL() does here; then it is put back so that nothing we start
   * (a mail client, KIO workers) inherits it. A value the user set is left alone. */
  const bool no_gl = !qEnvironmentVariableIsSet ("QT_XCB_GL_INTEGRATION");
  if (no_gl)
    qputenv ("QT_XCB_GL_INTEGRATION", "none");
  auto *app = new QApplication (app_argc, app_argv);
  if (no_gl)
    {
      /* Only on xcb: on Wayland the same question would load EGL. */
      if (QGuiApplication::platformName () == QLatin1String ("xcb"))
        QOpenGLContext::supportsThreadedOpenGL ();
      qunsetenv ("QT_XCB_GL_INTEGRATION");
    }
  app->setQuitOnLastWindowClosed (false);
  app->setApplicationName (QStringLiteral ("limen-kde"));
  app->setDesktopFileName (QStringLiteral ("limen-kde"));
  /* In Plasma the KDE platform theme gives Qt the user's icon theme. Without it (limen-kde
   * chosen outside Plasma) Qt looks up icons in "hicolor", which misses nearly all of
   * KFileWidget's and probes every size directory, also of a resource copy of hicolor
   * that has no icon cache: the first file dialog took 72-109 ms to build instead of
   * 29-36 ms. Use the icon theme KDE's own settings name (kdeglobals [Icons] Theme,
   * Breeze by default), as KIconLoader already does for the rest of the dialog. */
  const QString qt_theme = QIcon::themeName ();
  if (qt_theme.isEmpty () || qt_theme == QLatin1String ("hicolor"))
    {
      const QString kde_theme = KIconTheme::current ();
      if (!kde_theme.isEmpty () && kde_theme != qt_theme)
        QIcon::setThemeName (kde_theme);
    }
  qCDebug (LIMEN_SHIM) << "icon theme:" << QIcon::themeName () << "(Qt chose" << qt_theme << ")";
  setupTranslations ();
  return true;
}

void ensureCoreApplication ()
{
  if (QCoreApplication::instance ())
    return;
  if (ensureApplication ())
    return;
  auto *app = new QCoreApplication (app_argc, app_argv);
  app->setApplicationName (QStringLiteral ("limen-kde"));
  setupTranslations ();
}

void setWaylandParent (QWidget *w, const QString &handle)
{
  if (QGuiApplication::platformName () != QLatin1String ("wayland"))
    {
      qInfo ("limen-kde: parent wayland:%s ignored: the dialog is not on Wayland (Qt platform %s)",
             qPrintable (handle), qPrintable (QGuiApplication::platformName ()));
      return;
    }
  if (handle.isEmpty ())
    {
      qWarning ("limen-kde: wayland: empty parent handle; the dialog is parentless");
      return;
    }
  static decltype (&limen_qt_wayland_set_parent) set_parent = nullptr;
  static bool tried = false;
  if (!tried)
    {
      tried = true;
      Dl_info self {};
      QByteArray path;
      if (dladdr (reinterpret_cast<void *> (&limen_qt_unavailable_reason), &self) && self.dli_fname)
        {
          path = QByteArray (self.dli_fname);
          path = path.left (path.lastIndexOf ('/') + 1);
        }
      path += "liblimen-qt-wayland.so";
      if (void *module = dlopen (path.constData (), RTLD_LAZY | RTLD_LOCAL))
        set_parent = reinterpret_cast<decltype (set_parent)> (dlsym (module, "limen_qt_wayland_set_parent"));
      if (!set_parent)
        qWarning ("limen-kde: wayland: cannot load %s (%s); wayland: parents are ignored", path.constData (),
                  dlerror ());
    }
  if (set_parent)
    set_parent (w, handle);
}

QString mnemonicLabel (const char *label)
{
  QString in = str (label), out;
  for (int i = 0; i < in.size (); i++)
    {
      QChar c = in[i];
      if (c == QLatin1Char ('&'))
        out += QLatin1String ("&&");
      else if (c == QLatin1Char ('_'))
        {
          if (i + 1 < in.size () && in[i + 1] == QLatin1Char ('_'))
            {
              out += c;
              i++;
            }
          else
            out += QLatin1Char ('&');
        }
      else
        out += c;
    }
  return out;
}

void applyWindow (QWidget *w, const LimenQtWindow *window)
{
  QString parent = str (window->parent_window);
  if (parent.startsWith (QLatin1String ("x11:")) && KWindowSystem::isPlatformX11 ())
    {
      bool ok = false;
      WId xid = parent.mid (4).toULongLong (&ok, 16);
      if (ok && xid)
        {
          w->setAttribute (Qt::WA_NativeWindow, true);
          w->winId ();
          KWindowSystem::setMainWindow (w->windowHandle (), xid);
        }
    }
  else if (parent.startsWith (QLatin1String ("wayland:")))
    /* KWindowSystem 5.103 has no xdg-foreign API: imported through KWayland. */
    setWaylandParent (w, parent.mid (8));
  /* Never application-modal: one app's dialog must not block another app's. Window
   * modality towards the (foreign) transient parent makes the window manager treat it
   * as modal for that window only. */
  w->setWindowModality (window->modal && w->windowHandle () && w->windowHandle ()->transientParent ()
                          ? Qt::WindowModal : Qt::NonModal);
}

namespace {

/* A long check box label: wrapped beside its box, and a click on it toggles the box. */
class CheckLabel : public QLabel
{
public:
  CheckLabel (const QString &text, QCheckBox *box, QWidget *parent) : QLabel (text, parent), m_box (box)
  {
    setTextFormat (Qt::PlainText);
    setWordWrap (true);
    setBuddy (box);
  }

protected:
  void mouseReleaseEvent (QMouseEvent *event) override
  {
    if (event->button () == Qt::LeftButton && rect ().contains (event->pos ()))
      {
        m_box->toggle ();
        m_box->setFocus (Qt::MouseFocusReason);
      }
    QLabel::mouseReleaseEvent (event);
  }

private:
  QCheckBox *m_box;
};

} // namespace

ChoicesWidget::ChoicesWidget (size_t n, const LimenQtChoice *choices, QWidget *parent)
  : QWidget (parent)
{
  /* An app's label can be long (QFormLayout clipped a wrapped label): in a grid, a short
   * one stands left of its combo box, a long one wraps across the row with the combo box
   * below it, and a long check box label wraps beside its box. */
  auto *layout = new QGridLayout (this);
  layout->setContentsMargins (0, 0, 0, 0);
  layout->setColumnStretch (1, 1);
  const int longest = fontMetrics ().averageCharWidth () * 36;
  int row = 0;
  for (size_t i = 0; i < n; i++)
    {
      const LimenQtChoice &c = choices[i];
      const QString text = mnemonicLabel (c.label);
      const bool long_text = fontMetrics ().horizontalAdvance (text) > longest;
      QWidget *w;
      if (c.n_options == 0)
        {
          auto *box = new QCheckBox (this);
          box->setChecked (qstrcmp (c.initial, "true") == 0);
          if (long_text)
            {
              box->setAccessibleName (str (c.label));
              auto *pair = new QHBoxLayout;
              pair->addWidget (box, 0, Qt::AlignTop);
              pair->addWidget (new CheckLabel (breakable (text), box, this), 1);
              layout->addLayout (pair, row++, 0, 1, 2);
            }
          else
            {
              box->setText (text);
              layout->addWidget (box, row++, 0, 1, 2);
            }
          w = box;
        }
      else
        {
          auto *combo = new QComboBox (this);
          /* Long option labels do not widen the dialog; the open list shows them whole. */
          combo->setSizeAdjustPolicy (QComboBox::AdjustToMinimumContentsLengthWithIcon);
          combo->setMinimumContentsLength (16);
          for (size_t j = 0; j < c.n_options; j++)
            {
              combo->addItem (str (c.option_labels[j]), QByteArray (c.option_ids[j]));
              if (qstrcmp (c.option_ids[j], c.initial) == 0)
                combo->setCurrentIndex (int (j));
            }
          auto *label = new QLabel (breakable (text), this);
          label->setTextFormat (Qt::PlainText);   /* the app's words */
          label->setWordWrap (true);
          label->setBuddy (combo);
          if (long_text)
            {
              layout->addWidget (label, row++, 0, 1, 2);
              layout->addWidget (combo, row++, 0, 1, 2);
            }
          else
            {
              layout->addWidget (label, row, 0);
              layout->addWidget (combo, row++, 1);
            }
          w = combo;
        }
      w->setObjectName (QString::fromUtf8 ("choice-") + str (c.id));
      m_ids.append (QByteArray (c.id));
      m_widgets.append (w);
    }
}

QVector<QPair<QByteArray, QByteArray>> ChoicesWidget::values () const
{
  QVector<QPair<QByteArray, QByteArray>> out;
  for (int i = 0; i < m_ids.size (); i++)
    {
      if (auto *box = qobject_cast<QCheckBox *> (m_widgets[i]))
        out.append ({ m_ids[i], box->isChecked () ? QByteArray ("true") : QByteArray ("false") });
      else if (auto *combo = qobject_cast<QComboBox *> (m_widgets[i]))
        out.append ({ m_ids[i], combo->currentData ().toByteArray () });
    }
  return out;
}

QWidget *ChoicesWidget::widgetFor (const QByteArray &id) const
{
  int i = m_ids.indexOf (id);
  return i < 0 ? nullptr : m_widgets[i];
}

QVector<LimenQtChoiceResult> choiceResults (const QVector<QPair<QByteArray, QByteArray>> &values)
{
  QVector<LimenQtChoiceResult> out;
  for (const auto &v : values)
    out.append (LimenQtChoiceResult { v.first.constData (), v.second.constData () });
  return out;
}

} // namespace LimenQt

_LimenQtDialog::_LimenQtDialog (const LimenQtWindow *window)
  : QDialog (nullptr)
{
  m_parent = QByteArray (window->parent_window ? window->parent_window : "");
  m_window = *window;
  m_window.parent_window = m_parent.constData ();
  m_window.app_id = nullptr;
  open_dialogs++;
  connect (this, &QDialog::finished, this, [this] (int result) {
    if (!m_closed && !m_completed)
      onFinished (result == QDialog::Accepted);
  });
}

_LimenQtDialog::~_LimenQtDialog ()
{
  open_dialogs--;
}

void _LimenQtDialog::present ()
{
  /* Never larger than the screen (remembered sizes, 200% scale). Qt makes a new window at
   * most 2/3 of the screen high, which squeezed wrapped text (an app's long words, a
   * German label at 200%): as high as its wrapped text needs, where the screen allows. */
  if (QScreen *screen = QGuiApplication::primaryScreen ())
    {
      QSize avail = screen->availableGeometry ().size () * 0.9;
      QSize want = size ();
      if (layout ())
        layout ()->activate ();
      if (hasHeightForWidth ())
        want.setHeight (qMax (want.height (), heightForWidth (want.width ())));
      want = want.boundedTo (avail);
      if (want != size ())
        resize (want);
    }
  LimenQt::applyWindow (this, &m_window);
  show ();
  raise ();
  activateWindow ();
  pumpInput ();
}

void _LimenQtDialog::dispose ()
{
  hide ();
  if (m_busy > 0)
    {
      m_dispose_pending = true;
      return;
    }
  /* Inside a nested event loop (KIO's KJob::exec from KFileWidget code that is on the
   * stack, e.g. after Return in the name field) a deferred delete would run in that
   * loop; wait until we are back at the top level. */
  if (QThread::currentThread ()->loopLevel () > 0)
    {
      QTimer::singleShot (20, this, [this] { dispose (); });
      return;
    }
  deleteLater ();
}

void _LimenQtDialog::closeFromPortal ()
{
  m_closed = true;
  dispose ();
}

void _LimenQtDialog::complete (const std::function<void ()> &report)
{
  if (m_completed)
    return;
  m_completed = true;
  if (!m_closed)
    report ();
  dispose ();
}

extern "C" {

LIMEN_QT_EXPORT const char *
limen_qt_unavailable_reason (void)
{
  if (qobject_cast<QApplication *> (QCoreApplication::instance ()))
    return nullptr;
  if (QCoreApplication::instance ())
    return "started without a display";
  return probeDisplay ();
}

LIMEN_QT_EXPORT void
limen_qt_close (LimenQtDialog *dialog)
{
  if (dialog)
    dialog->closeFromPortal ();
}

LIMEN_QT_EXPORT unsigned long
limen_qt_dialog_window_id (LimenQtDialog *dialog)
{
  if (!dialog || !KWindowSystem::isPlatformX11 () || !dialog->isVisible ())
    return 0;
  return static_cast<unsigned long> (dialog->winId ());
}

} // extern "C"
