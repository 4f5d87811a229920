/* Limen — remote files (sftp://, smb://, webdav://, mtp:/ ...) as local paths, through
 * kio-fuse, for the file dialog of liblimen-qt.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <QList>
#include <QUrl>
#include <functional>

class QObject;

namespace LimenQt {

/* Whether org.kde.KIOFuse runs or can be activated on the session bus. Without it an app
 * can use local files only, and the dialog offers nothing else. */
bool kioFuseAvailable ();

/* How a URL the dialog picked is mapped: the item itself (it exists: Open, a folder for
 * SaveFiles) or its folder and then its name (SaveFile's file need not exist yet). */
enum class RemoteMapping { Item, Parent };

/* Map every URL of @urls that is not a local file to its path in kio-fuse's mount
 * (org.kde.KIOFuse.VFS.mountUrl), asynchronously; @done gets the list in the same order,
 * each URL that could not be mapped left as it was. @context ends the calls with it. */
void mapRemoteUrls (QObject *context, const QList<QUrl> &urls, RemoteMapping how,
                    const std::function<void (const QList<QUrl> &)> &done);

} // namespace LimenQt
