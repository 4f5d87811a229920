/* Limen — liblimen-qt: "wayland:HANDLE" parent windows through xdg-foreign v2.
 *
 * The caller exported its toplevel with zxdg_exporter_v2 and passed the handle. We import
 * it on Qt's own Wayland connection (zxdg_importer_v2) and make the dialog's surface its
 * child (set_parent_of): the compositor then stacks, places and treats the dialog as a
 * transient of the caller's window. Everything is asynchronous on Qt's default event
 * queue, which Qt dispatches from the GLib main loop: nothing here waits on the compositor.
 *
 * A bad or expired handle is not an error for the portal call: the compositor answers it
 * with zxdg_imported_v2.destroyed, we log why, and the dialog stays a window of its own.
 *
 * This is a module of its own, liblimen-qt-wayland.so, opened by liblimen-qt only for a
 * wayland: parent on Wayland: KWayland and Qt's Wayland client library cost a dialog
 * on X11 ~8 ms of dynamic linking for nothing.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KWayland/Client/connection_thread.h>
#include <KWayland/Client/registry.h>
#include <KWayland/Client/surface.h>
#include <KWayland/Client/xdgforeign.h>
#include <QGuiApplication>
#include <QPointer>
#include <QWindow>
#include <algorithm>

namespace {

using KWayland::Client::ConnectionThread;
using KWayland::Client::Registry;
using KWayland::Client::Surface;
using KWayland::Client::XdgImported;
using KWayland::Client::XdgImporter;

/* The process's one zxdg_importer_v2, bound once the registry has announced its globals. */
class Foreign : public QObject
{
public:
  enum class State { Pending, Ready, Missing };

  static Foreign *instance ()
  {
    static QPointer<Foreign> self;
    if (!self)
      self = new Foreign (QCoreApplication::instance ());
    return self;
  }

  State state () const { return m_state; }
  XdgImporter *importer () const { return m_importer; }
  ConnectionThread *connection () const { return m_connection; }

  /* Run @callback once the importer is bound or known to be missing (at once if known). */
  void whenKnown (QObject *context, const std::function<void ()> &callback)
  {
    if (m_state != State::Pending)
      {
        callback ();
        return;
      }
    m_waiting.append ({ QPointer<QObject> (context), callback });
  }

private:
  explicit Foreign (QObject *parent) : QObject (parent)
  {
    m_connection = ConnectionThread::fromApplication (this);
    if (!m_connection)
      {
        qWarning ("limen-kde: wayland: no Wayland connection from Qt; wayland: parents are ignored");
        m_state = State::Missing;
        return;
      }
    m_registry = new Registry (this);
    m_registry->create (m_connection);
    connect (m_registry, &Registry::interfacesAnnounced, this, [this] {
      const Registry::AnnouncedInterface iface = m_registry->interface (Registry::Interface::XdgImporterUnstableV2);
      if (iface.name != 0)
        {
          m_importer = m_registry->createXdgImporter (iface.name, std::min (iface.version, 1u), this);
          m_state = State::Ready;
        }
      else
        {
          qWarning ("limen-kde: wayland: the compositor offers no zxdg_importer_v2; dialogs stay parentless");
          m_state = State::Missing;
        }
      const auto waiting = std::move (m_waiting);
      m_waiting.clear ();
      for (const auto &w : waiting)
        if (w.first)
          w.second ();
    });
    m_registry->setup ();
    m_connection->flush ();
  }

  State m_state = State::Pending;
  ConnectionThread *m_connection = nullptr;
  Registry *m_registry = nullptr;
  XdgImporter *m_importer = nullptr;
  QVector<QPair<QPointer<QObject>, std::function<void ()>>> m_waiting;
};

/* Lives as a child of the dialog widget. Links the dialog's surface to the imported parent
 * as soon as its window is shown: Qt creates the xdg_toplevel inside show(), so the link
 * precedes the first buffer and KWin can place the dialog as the parent's transient.
 * Hiding unlinks (destroying zxdg_imported_v2 ends the relation; Qt drops the surface
 * then), showing again links the new surface. */
class ForeignParent : public QObject
{
public:
  ForeignParent (QWidget *dialog, QWindow *window, const QString &handle)
    : QObject (dialog), m_window (window), m_handle (handle)
  {
    setObjectName (QStringLiteral ("limen-foreign-parent"));
    connect (window, &QWindow::visibleChanged, this, [this] (bool visible) {
      if (visible)
        link ();
      else
        delete m_imported.data ();
    });
    Foreign::instance ()->whenKnown (this, [this] { link (); });
  }

private:
  void link ()
  {
    if (m_imported || m_failed || !m_window || !m_window->isVisible ())
      return;
    Foreign *foreign = Foreign::instance ();
    if (foreign->state () == Foreign::State::Pending)
      return;
    if (foreign->state () == Foreign::State::Missing)
      {
        m_failed = true;
        return;
      }
    Surface *surface = Surface::fromWindow (m_window);
    if (!surface || !surface->isValid ())
      {
        qWarning ("limen-kde: wayland: the dialog has no Wayland surface; parent %s not applied",
                  qPrintable (m_handle));
        m_failed = true;
        return;
      }
    m_imported = foreign->importer ()->importTopLevel (m_handle, this);
    if (!m_imported || !m_imported->isValid ())
      {
        qWarning ("limen-kde: wayland: importing parent %s failed; the dialog stays parentless",
                  qPrintable (m_handle));
        m_failed = true;
        return;
      }
    const QString handle = m_handle;
    connect (m_imported, &XdgImported::importedDestroyed, this, [handle] {
      qWarning ("limen-kde: wayland: the compositor does not know parent %s (invalid, expired or its "
                "window closed); the dialog is parentless",
                qPrintable (handle));
    });
    /* On an unknown handle the compositor makes the import inert: set_parent_of on it is
     * harmless, so the answer need not be awaited. */
    m_imported->setParentOf (surface);
    foreign->connection ()->flush ();
    qInfo ("limen-kde: wayland: dialog set as child of parent %s", qPrintable (m_handle));
  }

  QPointer<QWindow> m_window;
  QString m_handle;
  QPointer<XdgImported> m_imported;
  bool m_failed = false;
};

} // namespace

/* The module's one entry point (see LimenQt::setWaylandParent, which has checked that
 * Qt is on Wayland and @handle is not empty). */
extern "C" LIMEN_QT_EXPORT void
limen_qt_wayland_set_parent (QWidget *w, const QString &handle)
{
  if (w->findChild<QObject *> (QStringLiteral ("limen-foreign-parent"), Qt::FindDirectChildrenOnly))
    return;
  w->winId ();
  QWindow *window = w->windowHandle ();
  if (!window)
    {
      qWarning ("limen-kde: wayland: the dialog has no window; parent %s not applied", qPrintable (handle));
      return;
    }
  new ForeignParent (w, window, handle);
}
