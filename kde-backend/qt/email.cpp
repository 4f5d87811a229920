/* Limen — ComposeEmail through KDE's mail client launcher (the user's mailto handler).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KEMailClientLauncherJob>
#include <QUrl>

using LimenQt::str;

static QStringList splitAddresses (const char *s)
{
  QStringList out;
  for (const QString &a : str (s).split (QLatin1Char (','), Qt::SkipEmptyParts))
    if (!a.trimmed ().isEmpty ())
      out += a.trimmed ();
  return out;
}

extern "C" LIMEN_QT_EXPORT int
limen_qt_email_compose (const LimenQtEmailSpec *spec, LimenQtEmailDone done, void *user_data)
{
  LimenQt::ensureCoreApplication ();
  auto *job = new KEMailClientLauncherJob;
  job->setTo (splitAddresses (spec->to));
  job->setCc (splitAddresses (spec->cc));
  job->setBcc (splitAddresses (spec->bcc));
  job->setSubject (str (spec->subject));
  job->setBody (str (spec->body));
  QList<QUrl> attachments;
  for (size_t i = 0; i < spec->n_attachments; i++)
    attachments += QUrl::fromLocalFile (str (spec->attachments[i]));
  job->setAttachments (attachments);
  QObject::connect (job, &KJob::result, [job, done, user_data] {
    QByteArray message = job->errorString ().toUtf8 ();
    done (job->error () ? LIMEN_QT_RESPONSE_OTHER : LIMEN_QT_RESPONSE_OK,
          job->error () ? message.constData () : nullptr, user_data);
  });
  job->start ();
  return 0;
}
