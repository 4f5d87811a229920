/* Limen tests — starts a desktop file the way Plasma's menu does: KIO's ApplicationLauncherJob
 * on the KService of the file, or on one of its actions (a menu entry's context menu).
 * Prints "started PID" and exits 0 once KIO started the process, or "error: TEXT" and
 * exits 1; "no action: ID" (exit 2) when the file has no such action.
 * Usage: kio-launch-probe DESKTOP_FILE ACTION_ID|"" [FILE...]
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <KIO/ApplicationLauncherJob>
#include <KService>
#include <QGuiApplication>
#include <QUrl>
#include <cstdio>

int
main (int argc, char **argv)
{
  QGuiApplication app (argc, argv);
  if (argc < 3)
    {
      fprintf (stderr, "usage: kio-launch-probe DESKTOP_FILE ACTION_ID|\"\" [FILE...]\n");
      return 2;
    }
  KService::Ptr service (new KService (QString::fromLocal8Bit (argv[1])));
  KIO::ApplicationLauncherJob *job = nullptr;
  QList<QUrl> urls;
  for (int i = 3; i < argc; i++)
    urls << QUrl::fromLocalFile (QString::fromLocal8Bit (argv[i]));
  if (argv[2][0])
    {
      const QString id = QString::fromUtf8 (argv[2]);
      for (const KServiceAction &action : service->actions ())
        if (action.name () == id)
          job = new KIO::ApplicationLauncherJob (action);
      if (!job)
        {
          printf ("no action: %s\n", argv[2]);
          return 2;
        }
    }
  else
    job = new KIO::ApplicationLauncherJob (service);
  job->setUrls (urls);
  if (!job->exec ())
    {
      printf ("error: %s\n", qPrintable (job->errorString ()));
      return 1;
    }
  printf ("started %lld\n", job->pids ().isEmpty () ? -1LL : qint64 (job->pids ().first ()));
  return 0;
}
