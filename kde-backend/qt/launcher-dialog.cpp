/* Limen — the DynamicLauncher dialog: an app wants to add a launcher (an application or a
 * web application) to the application menu; the person sees its icon and name, may rename
 * it, and adds it or cancels.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KLocalizedString>
#include <KStandardGuiItem>
#include <QBuffer>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QIcon>
#include <QImageReader>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

using LimenQt::str;

namespace {

/* What the frontend lets through (PNG, JPEG, SVG), nothing a Qt plugin might add. */
QByteArray iconFormat (const QByteArray &data)
{
  QBuffer buffer (const_cast<QByteArray *> (&data));
  buffer.open (QIODevice::ReadOnly);
  QByteArray format = QImageReader::imageFormat (&buffer);
  if (format == "png" || format == "jpeg" || format == "svg")
    return format;
  return QByteArray ();
}

/* The icon at @device pixels (square, aspect kept); null when it does not decode or a raster
 * image is larger than @max_pixels. SVG goes through Qt's svg image plugin, rendered at the
 * size asked, so no Qt Svg link is needed. */
QImage iconImage (const QByteArray &data, int device, int max_pixels)
{
  const QByteArray format = iconFormat (data);
  QImage image;

  if (format.isEmpty ())
    return QImage ();
  QBuffer buffer (const_cast<QByteArray *> (&data));
  buffer.open (QIODevice::ReadOnly);
  QImageReader reader (&buffer, format);
  /* The header's size first: a huge raster image is refused before it is decoded. */
  QSize size = reader.size ();
  if (!size.isValid () || size.isEmpty ())
    return QImage ();
  if (format == "svg")
    reader.setScaledSize (size.scaled (device, device, Qt::KeepAspectRatio));
  else if (size.width () > max_pixels || size.height () > max_pixels)
    return QImage ();
  if (!reader.read (&image))
    return QImage ();
  if (format != "svg")
    image = image.scaled (device, device, Qt::KeepAspectRatio, Qt::SmoothTransformation);
  return image;
}

/* The name as the person leaves it: trimmed, one line, within the portal's limit. */
bool nameAcceptable (const QString &name)
{
  const QByteArray utf8 = name.trimmed ().toUtf8 ();
  return !utf8.isEmpty () && utf8.size () <= 256;
}

const int kMaxPixels = 512;
const int kIconSize = 96;

class LauncherDialog : public _LimenQtDialog
{
public:
  LauncherDialog (const LimenQtLauncherSpec *spec, LimenQtLauncherDone done, void *user_data)
    : _LimenQtDialog (&spec->window), m_done (done), m_user_data (user_data)
  {
    setObjectName (QStringLiteral ("limen-launcher-dialog"));
    setWindowTitle (spec->webapp ? i18nc ("@title:window", "Add Web Application")
                                 : i18nc ("@title:window", "Add Application"));
    auto *outer = new QHBoxLayout (this);
    auto *icon = new QLabel (this);
    icon->setObjectName (QStringLiteral ("icon"));
    const qreal dpr = devicePixelRatioF ();
    QImage image = iconImage (QByteArray (static_cast<const char *> (spec->icon_data), int (spec->icon_size)),
                              qRound (kIconSize * dpr), kMaxPixels);
    QPixmap pixmap = QPixmap::fromImage (image);
    pixmap.setDevicePixelRatio (dpr);
    if (image.isNull ())
      pixmap = QIcon::fromTheme (QStringLiteral ("application-x-executable")).pixmap (kIconSize, kIconSize);
    icon->setPixmap (pixmap);
    icon->setAlignment (Qt::AlignTop | Qt::AlignHCenter);
    icon->setMinimumSize (kIconSize, kIconSize);
    outer->addWidget (icon);

    auto *col = new QVBoxLayout;
    outer->addLayout (col, 1);
    const QString app = LimenQt::breakable (str (spec->app_name));
    QString intro;
    if (spec->webapp)
      intro = app.isEmpty () ? i18n ("An application wants to add this web application to the application menu.")
                             : i18nc ("%1 is an application's name",
                                      "%1 wants to add this web application to the application menu.", app);
    else
      intro = app.isEmpty () ? i18n ("An application wants to add this launcher to the application menu.")
                             : i18nc ("%1 is an application's name",
                                      "%1 wants to add this launcher to the application menu.", app);
    auto *label = new QLabel (intro, this);
    label->setObjectName (QStringLiteral ("intro"));
    label->setWordWrap (true);
    label->setTextFormat (Qt::PlainText);
    col->addWidget (label);

    auto *form = new QFormLayout;
    m_name = new QLineEdit (str (spec->name), this);
    m_name->setObjectName (QStringLiteral ("name"));
    m_name->setReadOnly (!spec->editable_name);
    m_name->setClearButtonEnabled (spec->editable_name);
    form->addRow (i18nc ("@label:textbox the name of a launcher", "&Name:"), m_name);
    if (spec->webapp && spec->target && *spec->target)
      addAddress (form, str (spec->target));
    col->addLayout (form);
    col->addStretch ();

    auto *buttons = new QDialogButtonBox (this);
    m_add = buttons->addButton (i18nc ("@action:button add the launcher to the menu", "&Add"),
                                QDialogButtonBox::AcceptRole);
    m_add->setObjectName (QStringLiteral ("add"));
    m_add->setIcon (QIcon::fromTheme (QStringLiteral ("list-add")));
    /* KDE's own Cancel item: translated by KWidgetsAddons' catalog, with its icon. */
    QPushButton *cancel = buttons->addButton (QDialogButtonBox::Cancel);
    KGuiItem::assign (cancel, KStandardGuiItem::cancel ());
    /* Return while typing the name must not add the launcher behind the person's back:
     * only the button (or its mnemonic) does. */
    m_add->setAutoDefault (false);
    cancel->setAutoDefault (false);
    connect (buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect (buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect (m_name, &QLineEdit::textChanged, this, [this] (const QString &text) {
      m_add->setEnabled (nameAcceptable (text));
    });
    m_add->setEnabled (nameAcceptable (m_name->text ()));
    col->addWidget (buttons);
    setMinimumWidth (460);
    if (spec->editable_name)
      {
        m_name->setFocus ();
        m_name->selectAll ();
      }
  }

protected:
  void onFinished (bool accepted) override
  {
    const bool ok = accepted && nameAcceptable (m_name->text ());
    const QByteArray name = m_name->text ().trimmed ().toUtf8 ();
    complete ([&] {
      m_done (this, ok ? LIMEN_QT_RESPONSE_OK : LIMEN_QT_RESPONSE_CANCELLED, ok ? name.constData () : "",
              m_user_data);
    });
  }

private:
  void addAddress (QFormLayout *form, const QString &url)
  {
    auto *address = new QLabel (this);
    address->setObjectName (QStringLiteral ("address"));
    address->setTextFormat (Qt::PlainText);
    /* A long address is shortened in the middle, short enough for a 2× scaled dialog on a
     * small screen (adjustSize() keeps a dialog within 2/3 of the screen); the whole of it is
     * in the tooltip. */
    address->setText (address->fontMetrics ().elidedText (url, Qt::ElideMiddle, 280));
    address->setToolTip (LimenQt::plainToolTip (url));
    address->setTextInteractionFlags (Qt::TextSelectableByMouse);
    /* A label of our own with the address as its buddy: KDE's accelerator manager would
     * otherwise add a mnemonic after the form has measured the label, cutting it off. */
    auto *label = new QLabel (i18nc ("@label the web address of a web application", "Add&ress:"), this);
    label->setBuddy (address);
    address->setFocusPolicy (Qt::ClickFocus);
    form->addRow (label, address);
  }

  QLineEdit *m_name = nullptr;
  QPushButton *m_add = nullptr;
  LimenQtLauncherDone m_done;
  void *m_user_data;
};

} // namespace

extern "C" LIMEN_QT_EXPORT int
limen_qt_launcher_icon_check (const void *data, size_t size, int max_pixels)
{
  if (!data || size == 0 || size > size_t (4 * 1024 * 1024))
    return 0;
  /* Decoding an SVG may need fonts: the same application the dialog will use. */
  if (!LimenQt::ensureApplication ())
    return 0;
  return iconImage (QByteArray (static_cast<const char *> (data), int (size)), 16, max_pixels).isNull () ? 0 : 1;
}

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_launcher_open (const LimenQtLauncherSpec *spec, LimenQtLauncherDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *dialog = new LauncherDialog (spec, done, user_data);
  dialog->adjustSize ();
  dialog->present ();
  return dialog;
}
