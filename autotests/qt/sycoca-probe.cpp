/* Limen tests — a KService cache listener, as Plasma's application menu is: it opens the
 * cache, then waits (up to SECONDS) for KSycoca::databaseChanged to bring DESKTOP_ID.
 * Prints "start: NAME|missing", then "changed: NAME" and exits 0 once the launcher is in the
 * cache, or "timeout: NAME|missing" and exits 1.
 * Usage: sycoca-probe DESKTOP_ID SECONDS
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <KService>
#include <KSycoca>
#include <QCoreApplication>
#include <QTimer>
#include <cstdio>

int
main (int argc, char **argv)
{
  QCoreApplication app (argc, argv);
  if (argc != 3)
    {
      fprintf (stderr, "usage: sycoca-probe DESKTOP_ID SECONDS\n");
      return 2;
    }
  const QString id = QString::fromUtf8 (argv[1]);
  auto report = [&] (const char *when) {
    KService::Ptr service = KService::serviceByStorageId (id);
    printf ("%s: %s\n", when, service ? qPrintable (service->name ()) : "missing");
    fflush (stdout);
    return bool (service);
  };
  /* The menu listens before anything is installed; the first query builds the cache. */
  QObject::connect (KSycoca::self (), qOverload<> (&KSycoca::databaseChanged), &app, [&] {
    if (report ("changed"))
      app.exit (0);
  });
  report ("start");
  QTimer::singleShot (atoi (argv[2]) * 1000, &app, [&] {
    report ("timeout");
    app.exit (1);
  });
  return app.exec ();
}
