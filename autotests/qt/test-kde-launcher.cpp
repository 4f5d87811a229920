/* Limen — QTest (offscreen) of liblimen-qt's launcher dialog: which icons decode, the name
 * rules of the Add button (bytes, not characters; trimmed), and Close.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <QBuffer>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTest>

namespace {

struct Result
{
  int calls = 0;
  int response = -1;
  QString name;
};

void launcherDone (LimenQtDialog *, int response, const char *name, void *data)
{
  auto *r = static_cast<Result *> (data);
  r->calls++;
  r->response = response;
  r->name = QString::fromUtf8 (name);
}

QByteArray png (int size)
{
  QImage image (size, size, QImage::Format_ARGB32);
  image.fill (Qt::darkGreen);
  QByteArray data;
  QBuffer buffer (&data);
  buffer.open (QIODevice::WriteOnly);
  image.save (&buffer, "PNG");
  return data;
}

const char kSvg[] = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\">"
                    "<rect width=\"10\" height=\"10\" fill=\"red\"/></svg>";

} // namespace

class TestKdeLauncher : public QObject
{
  Q_OBJECT

private:
  QByteArray m_icon = png (64);

  LimenQtDialog *open (Result *result, const char *name, int editable = 1)
  {
    LimenQtLauncherSpec spec {};
    spec.window = { "", "org.example.App", 1 };
    spec.app_name = "Example";
    spec.name = name;
    spec.editable_name = editable;
    spec.icon_data = m_icon.constData ();
    spec.icon_size = size_t (m_icon.size ());
    return limen_qt_launcher_open (&spec, launcherDone, result);
  }

private Q_SLOTS:
  void iconCheck ()
  {
    QCOMPARE (limen_qt_launcher_icon_check (m_icon.constData (), size_t (m_icon.size ()), 512), 1);
    const QByteArray big = png (513);
    QCOMPARE (limen_qt_launcher_icon_check (big.constData (), size_t (big.size ()), 512), 0);
    QCOMPARE (limen_qt_launcher_icon_check (kSvg, sizeof kSvg - 1, 512), 1);
    const QByteArray gif = QByteArrayLiteral ("GIF89a\x01\x00\x01\x00\x00\x00\x00;");
    QCOMPARE (limen_qt_launcher_icon_check (gif.constData (), size_t (gif.size ()), 512), 0);
    QCOMPARE (limen_qt_launcher_icon_check ("not an image", 12, 512), 0);
    QCOMPARE (limen_qt_launcher_icon_check (nullptr, 0, 512), 0);
  }

  void nameRules ()
  {
    Result result;
    LimenQtDialog *dialog = open (&result, "Tool");
    auto *name = dialog->findChild<QLineEdit *> (QStringLiteral ("name"));
    auto *add = dialog->findChild<QPushButton *> (QStringLiteral ("add"));
    QVERIFY (!dialog->findChild<QLabel *> (QStringLiteral ("icon"))->pixmap (Qt::ReturnByValue).isNull ());
    QVERIFY (add->isEnabled ());
    /* 128 × "ü" is 256 bytes, the portal's limit; one more is too long. */
    name->setText (QString (128, QChar (0xfc)));
    QVERIFY (add->isEnabled ());
    name->setText (QString (129, QChar (0xfc)));
    QVERIFY (!add->isEnabled ());
    name->setText (QStringLiteral ("   "));
    QVERIFY (!add->isEnabled ());
    name->setText (QStringLiteral ("  Trimmed Tool  "));
    add->click ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, 0);
    QCOMPARE (result.name, QStringLiteral ("Trimmed Tool"));
  }

  void readOnlyNameAndClose ()
  {
    Result result;
    LimenQtDialog *dialog = open (&result, "Fixed", 0);
    QVERIFY (dialog->findChild<QLineEdit *> (QStringLiteral ("name"))->isReadOnly ());
    limen_qt_close (dialog);
    QTest::qWait (20);
    QCOMPARE (result.calls, 0);
  }
};

QTEST_MAIN (TestKdeLauncher)
#include "test-kde-launcher.moc"
