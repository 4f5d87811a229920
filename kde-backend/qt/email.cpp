/* Limen — ComposeEmail through KDE's mail client launcher (the user's mailto handler).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KApplicationTrader>
#include <KEMailClientLauncherJob>
#include <KIO/CommandLauncherJob>
#include <KIO/DesktopExecParser>
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

/* KIO starts Thunderbird (and Dovecot's wrapper) with one "-compose" word of key='value'
 * pairs, and KIO 5.103 puts the app's words in it as they are: a subject `x',attachment='
 * /home/me/.ssh/id_rsa` or an attachment path with a quote or a comma in it attached a file
 * of the person's that the app never had. The same mail client, the same way, but with no
 * value that can leave its quotes. */
static bool takesComposeWord (const KService::Ptr &service)
{
  const QString path = service->entryPath ().toLower ();
  return path.contains (QLatin1String ("thunderbird")) || path.contains (QLatin1String ("dovecot"));
}

/* Only what could end the value or change its meaning is percent-encoded: the word stays
 * within the kernel's 128 KiB for any body the option table allows (64 KiB), which encoding
 * every byte outside [A-Za-z0-9-._~] would not for most scripts but Latin. */
static QString encodeValue (const QString &value)
{
  QString out;
  out.reserve (value.size ());
  for (const QChar c : value)
    {
      const ushort u = c.unicode ();
      if (u < 0x20 || u == 0x7f || u == '%' || u == ',' || u == '\'' || u == '"')
        out += QString::asprintf ("%%%02X", u);
      else
        out += c;
    }
  return out;
}

static QString composeWord (const LimenQtEmailSpec *spec)
{
  QStringList pairs;
  /* Addresses hold neither quotes nor commas (the option table refuses them). */
  auto addresses = [&] (const char *key, const char *list) {
    const QStringList all = splitAddresses (list);
    if (!all.isEmpty ())
      pairs += QLatin1String (key) + QLatin1String ("='") + all.join (QLatin1Char (',')) + QLatin1Char ('\'');
  };
  /* Unquoted, with no quote and no comma left: Thunderbird percent-decodes such a value. */
  auto text = [&] (const char *key, const QString &value) {
    if (!value.isEmpty ())
      pairs += QLatin1String (key) + QLatin1Char ('=') + encodeValue (value);
  };
  addresses ("to", spec->to);
  addresses ("cc", spec->cc);
  addresses ("bcc", spec->bcc);
  QStringList files;
  for (size_t i = 0; i < spec->n_attachments; i++)
    files += QString::fromLatin1 (QUrl::fromLocalFile (str (spec->attachments[i])).toEncoded ())
               .replace (QLatin1Char (','), QLatin1String ("%2C"))
               .replace (QLatin1Char ('\''), QLatin1String ("%27"));
  if (!files.isEmpty ())
    pairs += QLatin1String ("attachment='") + files.join (QLatin1Char (',')) + QLatin1Char ('\'');
  text ("subject", str (spec->subject));
  /* Thunderbird takes the body as HTML. */
  text ("body", str (spec->body).toHtmlEscaped ());
  return pairs.join (QLatin1Char (','));
}

static KJob *composeJob (const LimenQtEmailSpec *spec)
{
  const KService::Ptr service = KApplicationTrader::preferredService (QStringLiteral ("x-scheme-handler/mailto"));
  if (service && takesComposeWord (service))
    {
      QStringList args { QStringLiteral ("-compose") };
      const QString word = composeWord (spec);
      if (!word.isEmpty ())
        args += word;
      return new KIO::CommandLauncherJob (KIO::DesktopExecParser::executableName (service->exec ()), args);
    }
  /* Any other client gets a mailto: URL, whose values KIO percent-encodes. */
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
  return job;
}

extern "C" LIMEN_QT_EXPORT int
limen_qt_email_compose (const LimenQtEmailSpec *spec, LimenQtEmailDone done, void *user_data)
{
  LimenQt::ensureCoreApplication ();
  KJob *job = composeJob (spec);
  QObject::connect (job, &KJob::result, [job, done, user_data] {
    QByteArray message = job->errorString ().toUtf8 ();
    done (job->error () ? LIMEN_QT_RESPONSE_OTHER : LIMEN_QT_RESPONSE_OK,
          job->error () ? message.constData () : nullptr, user_data);
  });
  job->start ();
  return 0;
}
