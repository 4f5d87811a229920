/* Limen tests — a KDE app's notification, as KNotification sends it: inside a Flatpak sandbox
 * KNotification talks to the Notification portal itself (its portal backend) and learns of a
 * click from ActionInvoked. Sends one notification with a Reply and a Dismiss button, prints
 * "sent", then "action N" for button N (1-based, as KNotification counts) or "default", and
 * exits 0; "closed" or "timeout" and exit 1 otherwise.
 * Usage: knotification-client SECONDS
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <KNotification>
#include <QGuiApplication>
#include <QTimer>
#include <cstdio>

int
main (int argc, char **argv)
{
  QGuiApplication app (argc, argv);
  if (argc != 2)
    {
      fprintf (stderr, "usage: knotification-client SECONDS\n");
      return 2;
    }
  auto *n = new KNotification (QStringLiteral ("notification"), KNotification::Persistent);
  n->setTitle (QStringLiteral ("Backup finished"));
  n->setText (QStringLiteral ("12 files copied"));
  n->setIconName (QStringLiteral ("document-save"));
  n->setActions ({ QStringLiteral ("Reply"), QStringLiteral ("Dismiss") });
  n->setDefaultAction (QStringLiteral ("Open"));
  int status = 1;
  QObject::connect (n, qOverload<unsigned int> (&KNotification::activated), &app, [&] (unsigned int action) {
    printf ("action %u\n", action);
    fflush (stdout);
    status = 0;
    app.quit ();
  });
  QObject::connect (n, &KNotification::defaultActivated, &app, [&] {
    printf ("default\n");
    fflush (stdout);
    status = 0;
    app.quit ();
  });
  QObject::connect (n, &KNotification::closed, &app, [&] {
    if (status != 0)
      {
        printf ("closed\n");
        fflush (stdout);
      }
  });
  n->sendEvent ();
  printf ("sent\n");
  fflush (stdout);
  QTimer::singleShot (atoi (argv[1]) * 1000, &app, [&] {
    printf ("timeout\n");
    fflush (stdout);
    app.quit ();
  });
  app.exec ();
  return status;
}
