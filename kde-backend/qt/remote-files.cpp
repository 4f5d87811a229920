/* Limen — remote files as local paths through kio-fuse (see remote-files.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "remote-files.h"

#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QDBusReply>
#include <QObject>
#include <memory>

namespace {
const QString kioFuseName = QStringLiteral ("org.kde.KIOFuse");
}

namespace LimenQt {

/* Asked per dialog, not cached: kio-fuse may be installed or removed while we run. Both
 * are questions to the bus daemon, answered at once. */
bool kioFuseAvailable ()
{
  QDBusConnectionInterface *bus = QDBusConnection::sessionBus ().interface ();
  if (!bus)
    return false;
  if (bus->isServiceRegistered (kioFuseName).value ())
    return true;
  const QDBusReply<QStringList> activatable = bus->activatableServiceNames ();
  return activatable.isValid () && activatable.value ().contains (kioFuseName);
}

void mapRemoteUrls (QObject *context, const QList<QUrl> &urls, RemoteMapping how,
                    const std::function<void (const QList<QUrl> &)> &done)
{
  auto mapped = std::make_shared<QList<QUrl>> (urls);
  auto pending = std::make_shared<int> (0);
  for (int i = 0; i < urls.size (); i++)
    {
      const QUrl &url = urls[i];
      if (url.isLocalFile () || !url.isValid ())
        continue;
      const QUrl target = how == RemoteMapping::Parent ? url.adjusted (QUrl::RemoveFilename | QUrl::StripTrailingSlash)
                                                       : url;
      const QString name = how == RemoteMapping::Parent ? url.fileName () : QString ();
      if (how == RemoteMapping::Parent && name.isEmpty ())
        continue;
      QDBusMessage msg = QDBusMessage::createMethodCall (kioFuseName, QStringLiteral ("/org/kde/KIOFuse"),
                                                         QStringLiteral ("org.kde.KIOFuse.VFS"),
                                                         QStringLiteral ("mountUrl"));
      msg << target.toString ();
      (*pending)++;
      /* Mounting may connect to the server first (and kio-fuse's worker may wait for a
       * password): a generous timeout, never a blocking call. */
      auto *watcher = new QDBusPendingCallWatcher (QDBusConnection::sessionBus ().asyncCall (msg, 120000), context);
      QObject::connect (watcher, &QDBusPendingCallWatcher::finished, context,
                        [mapped, pending, i, name, done] (QDBusPendingCallWatcher *w) {
        QDBusPendingReply<QString> reply = *w;
        w->deleteLater ();
        if (reply.isValid () && reply.value ().startsWith (QLatin1Char ('/')))
          {
            QString path = reply.value ();
            if (!name.isEmpty ())
              path += (path.endsWith (QLatin1Char ('/')) ? QString () : QStringLiteral ("/")) + name;
            (*mapped)[i] = QUrl::fromLocalFile (path);
          }
        else
          qWarning ("limen-kde: kio-fuse could not mount a remote location: %s",
                    qPrintable (reply.error ().message ()));
        if (--(*pending) == 0)
          done (*mapped);
      });
    }
  if (*pending == 0)
    done (*mapped);
}

} // namespace LimenQt
