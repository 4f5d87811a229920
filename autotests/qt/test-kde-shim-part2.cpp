/* Limen — QTest (offscreen) of liblimen-qt's part-2 dialogs: background, wallpaper,
 * print (options → widgets → results), the screen-sharing picker's live pictures and
 * screenshot failure without a window system.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QPrintDialog>
#include <QPrinter>
#include <QPushButton>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Result
{
  int calls = 0;
  int response = -1;
  int choice = -1;
};

void backgroundDone (LimenQtDialog *, int response, int choice, void *data)
{
  auto *r = static_cast<Result *> (data);
  r->calls++;
  r->response = response;
  r->choice = choice;
}

void wallpaperDone (LimenQtDialog *, int response, void *data)
{
  auto *r = static_cast<Result *> (data);
  r->calls++;
  r->response = response;
}

void screenshotDone (LimenQtDialog *, int response, const char *uri, void *data)
{
  auto *r = static_cast<Result *> (data);
  r->calls++;
  r->response = response;
  r->choice = uri ? 1 : 0;
}

void printDone (LimenQtDialog *, int response, const LimenQtPrintSettings *, void *data)
{
  auto *r = static_cast<Result *> (data);
  r->calls++;
  r->response = response;
}

void castDone (LimenQtDialog *, int response, size_t, const char *const *, int, void *data)
{
  auto *r = static_cast<Result *> (data);
  r->calls++;
  r->response = response;
}

/* The colour in the middle of the picture a list item shows. */
QColor itemColour (QListWidget *list, int row)
{
  const QImage image = list->item (row)->icon ().pixmap (list->iconSize ()).toImage ();
  return image.pixelColor (image.width () / 2, image.height () / 2);
}

void grab (QWidget *w, const char *name)
{
  QString dir = qEnvironmentVariable ("LIMEN_ARTIFACTS");
  if (dir.isEmpty ())
    return;
  QDir ().mkpath (dir);
  w->grab ().save (dir + QLatin1Char ('/') + QLatin1String (name));
}

QWidget *topLevel (const QString &name)
{
  for (QWidget *w : QApplication::topLevelWidgets ())
    if (w->objectName () == name && w->isVisible ())
      return w;
  return nullptr;
}

} // namespace

class TestKdeShimPart2 : public QObject
{
  Q_OBJECT

private:
  QTemporaryDir m_tmp;

  /* KConfig writes where QStandardPaths says (its test mode: ~/.qttest/config). */
  static QString lockerrc ()
  {
    return QStandardPaths::writableLocation (QStandardPaths::GenericConfigLocation) + QStringLiteral ("/kscreenlockerrc");
  }

private Q_SLOTS:
  void initTestCase ()
  {
    QStandardPaths::setTestModeEnabled (true);
    QVERIFY (m_tmp.isValid ());
    QFile::remove (lockerrc ());
  }

  void backgroundChoices_data ()
  {
    QTest::addColumn<QString> ("button");
    QTest::addColumn<int> ("choice");
    QTest::newRow ("allow") << QStringLiteral ("allow") << int (LIMEN_QT_BACKGROUND_ALLOW);
    QTest::newRow ("once") << QStringLiteral ("once") << int (LIMEN_QT_BACKGROUND_ALLOW_ONCE);
    QTest::newRow ("forbid") << QStringLiteral ("forbid") << int (LIMEN_QT_BACKGROUND_FORBID);
  }

  void backgroundChoices ()
  {
    QFETCH (QString, button);
    QFETCH (int, choice);
    LimenQtBackgroundSpec spec {};
    spec.window = { "", "org.example.App", 1 };
    spec.app_id = "org.example.App";
    spec.name = "Example <b>Player</b>";
    Result result;
    LimenQtDialog *dialog = limen_qt_background_open (&spec, backgroundDone, &result);
    QVERIFY (dialog);
    auto *title = dialog->findChild<QLabel *> (QStringLiteral ("title"));
    /* The app's name is shown as text, never as markup. */
    QCOMPARE (title->textFormat (), Qt::PlainText);
    QVERIFY (title->text ().contains (QLatin1String ("Example <b>Player</b>")));
    if (button == QLatin1String ("once"))
      grab (dialog, "qtest-background.png");
    dialog->findChild<QPushButton *> (button)->click ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, int (LIMEN_QT_RESPONSE_OK));
    QCOMPARE (result.choice, choice);
  }

  void backgroundClose ()
  {
    LimenQtBackgroundSpec spec {};
    spec.window = { "", "", 1 };
    spec.app_id = "org.example.App";
    spec.name = "";
    Result result;
    LimenQtDialog *dialog = limen_qt_background_open (&spec, backgroundDone, &result);
    limen_qt_close (dialog);
    QTest::qWait (100);
    QCOMPARE (result.calls, 0);
  }

  void wallpaperPreviewCancel ()
  {
    QString png = m_tmp.filePath (QStringLiteral ("pic.png"));
    QImage image (64, 40, QImage::Format_RGB32);
    image.fill (Qt::darkCyan);
    QVERIFY (image.save (png));
    QByteArray uri = QUrl::fromLocalFile (png).toString ().toUtf8 ();
    LimenQtWallpaperSpec spec {};
    spec.window = { "", "", 1 };
    spec.app_id = "org.example.App";
    spec.uri = uri.constData ();
    spec.show_preview = 1;
    spec.set_on = LIMEN_QT_WALLPAPER_LOCKSCREEN;
    Result result;
    LimenQtDialog *dialog = limen_qt_wallpaper_open (&spec, wallpaperDone, &result);
    QVERIFY (dialog);
    auto *preview = dialog->findChild<QLabel *> (QStringLiteral ("preview"));
    QVERIFY (!preview->pixmap (Qt::ReturnByValue).isNull ());
    grab (dialog, "qtest-wallpaper.png");
    dialog->reject ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, int (LIMEN_QT_RESPONSE_CANCELLED));
    QVERIFY (!QFile::exists (lockerrc ()));
  }

  void wallpaperLockscreenOnly ()
  {
    QByteArray uri = QUrl::fromLocalFile (m_tmp.filePath (QStringLiteral ("pic.png"))).toString ().toUtf8 ();
    LimenQtWallpaperSpec spec {};
    spec.window = { "", "", 1 };
    spec.app_id = "org.example.App";
    spec.uri = uri.constData ();
    spec.set_on = LIMEN_QT_WALLPAPER_LOCKSCREEN;
    Result result;
    QVERIFY (limen_qt_wallpaper_open (&spec, wallpaperDone, &result));
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, int (LIMEN_QT_RESPONSE_OK));
    QFile rc (lockerrc ());
    QVERIFY (rc.open (QIODevice::ReadOnly));
    QVERIFY (rc.readAll ().contains ("Image=" + uri));
  }

  void printPreset ()
  {
    LimenQtPrintSpec spec {};
    spec.window = { "", "", 1 };
    spec.title = "Print the report";
    spec.initial = LimenQtPrintSettings {};
    spec.initial.copies = 3;
    spec.initial.collate = 1;
    spec.initial.duplex = -1;
    spec.initial.orientation = 1;
    spec.initial.from_page = 2;
    spec.initial.to_page = 4;
    spec.initial.color = -1;
    spec.initial.reverse = 1;
    Result result;
    LimenQtDialog *handle = limen_qt_print_open (&spec, printDone, &result);
    QVERIFY (handle);
    QWidget *w = nullptr;
    QTRY_VERIFY ((w = topLevel (QStringLiteral ("limen-print-dialog"))));
    auto *dialog = static_cast<QPrintDialog *> (w);
    QCOMPARE (dialog->windowTitle (), QStringLiteral ("Print the report"));
    QPrinter *printer = dialog->printer ();
    QCOMPARE (printer->copyCount (), 3);
    QVERIFY (printer->collateCopies ());
    QCOMPARE (printer->pageLayout ().orientation (), QPageLayout::Landscape);
    QCOMPARE (printer->printRange (), QPrinter::PageRange);
    QCOMPARE (printer->fromPage (), 2);
    QCOMPARE (printer->toPage (), 4);
    QCOMPARE (printer->pageOrder (), QPrinter::LastPageFirst);
    grab (dialog, "qtest-print.png");
    dialog->reject ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, int (LIMEN_QT_RESPONSE_CANCELLED));
  }

  void screencastLivePreview ()
  {
    /* The C side's pictures replace an item's still, each as it comes; once the dialog is
     * done, it says to stop. */
    const LimenQtCastSource windows[] = { { "window:one", "First", "org.example.One", nullptr, 0, 0 },
                                          { "window:two", "Second", "org.example.Two", nullptr, 0, 0 } };
    LimenQtScreenCastSpec spec {};
    spec.window = { "", "", 1 };
    spec.app_id = "org.example.App";
    spec.types = 2;
    spec.n_windows = 2;
    spec.windows = windows;
    Result result;
    LimenQtDialog *handle = limen_qt_screencast_open (&spec, castDone, &result);
    QVERIFY (handle);
    auto *list = topLevel (QStringLiteral ("limen-screencast-dialog"))->findChild<QListWidget *> (QStringLiteral ("sources"));
    QVERIFY (list);
    QImage picture (16, 10, QImage::Format_RGB32);
    picture.fill (QColor (0xd0, 0x20, 0x30));
    QCOMPARE (limen_qt_screencast_preview (handle, "window:two", 16, 10, picture.bytesPerLine (), picture.constBits ()), 1);
    QCOMPARE (itemColour (list, 1), QColor (0xd0, 0x20, 0x30));
    QVERIFY (itemColour (list, 0) != QColor (0xd0, 0x20, 0x30));
    picture.fill (QColor (0x30, 0x60, 0xd0));
    QCOMPARE (limen_qt_screencast_preview (handle, "window:two", 16, 10, picture.bytesPerLine (), picture.constBits ()), 1);
    QCOMPARE (itemColour (list, 1), QColor (0x30, 0x60, 0xd0));
    /* Nonsense is refused, not drawn. */
    QCOMPARE (limen_qt_screencast_preview (handle, "window:two", 16, 10, 8, picture.constBits ()), 0);
    QCOMPARE (limen_qt_screencast_preview (handle, nullptr, 16, 10, picture.bytesPerLine (), picture.constBits ()), 0);
    grab (list->window (), "qtest-screencast-preview.png");
    static_cast<QDialog *> (list->window ())->reject ();
    QCOMPARE (limen_qt_screencast_preview (handle, "window:two", 16, 10, picture.bytesPerLine (), picture.constBits ()), 0);
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, int (LIMEN_QT_RESPONSE_CANCELLED));
  }

  void screenshotWithoutWindowSystem ()
  {
    /* offscreen: no KWin, no X server — a clear failure, not a blank picture. */
    LimenQtScreenshotSpec spec {};
    spec.window = { "", "", 1 };
    spec.app_id = "org.example.App";
    QByteArray folder = m_tmp.filePath (QStringLiteral ("shots")).toUtf8 ();
    spec.folder = folder.constData ();
    Result result;
    QVERIFY (limen_qt_screenshot_open (&spec, screenshotDone, &result));
    QTRY_COMPARE_WITH_TIMEOUT (result.calls, 1, 15000);
    QCOMPARE (result.response, int (LIMEN_QT_RESPONSE_OTHER));
    QCOMPARE (result.choice, 0);
    QVERIFY (!QDir (QString::fromUtf8 (folder)).exists () || QDir (QString::fromUtf8 (folder)).isEmpty ());
  }
};

QTEST_MAIN (TestKdeShimPart2)
#include "test-kde-shim-part2.moc"
