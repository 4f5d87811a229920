/* Limen — the print dialog: Qt's QPrintDialog (KDE's print dialog on Plasma), preset
 * from the portal's settings and read back into them. Printing itself is the C side's
 * (libcups), so the application's PDF never passes through Qt.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KLocalizedString>
#include <QAbstractButton>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QPageLayout>
#include <QPageSize>
#include <QPrintDialog>
#include <QPrinter>
#include <QPrinterInfo>
#include <QPushButton>

using LimenQt::str;

namespace {

/* The handle never shows itself; it owns the QPrintDialog (a QDialog of Qt's own, which
 * cannot derive from our base). */
class PrintHandle : public _LimenQtDialog
{
public:
  PrintHandle (const LimenQtPrintSpec *spec, LimenQtPrintDone done, void *user_data)
    : _LimenQtDialog (&spec->window), m_done (done), m_user_data (user_data),
      m_printer (QPrinter::HighResolution)
  {
    setObjectName (QStringLiteral ("limen-print"));
    const LimenQtPrintSettings &in = spec->initial;
    if (in.printer && *in.printer && !QPrinterInfo::printerInfo (str (in.printer)).isNull ())
      m_printer.setPrinterName (str (in.printer));
    if (in.copies >= 1)
      m_printer.setCopyCount (in.copies);
    if (in.collate >= 0)
      m_printer.setCollateCopies (in.collate);
    if (in.duplex >= 0)
      m_printer.setDuplex (in.duplex == 1 ? QPrinter::DuplexLongSide
                           : in.duplex == 2 ? QPrinter::DuplexShortSide : QPrinter::DuplexNone);
    if (in.orientation >= 0)
      m_printer.setPageOrientation (in.orientation == 1 || in.orientation == 2 ? QPageLayout::Landscape
                                                                                : QPageLayout::Portrait);
    if (in.page_set == 1 && spec->has_current_page)
      m_printer.setPrintRange (QPrinter::CurrentPage);
    else if (in.page_set == 2 && spec->has_selected_pages)
      m_printer.setPrintRange (QPrinter::Selection);
    else if (in.from_page > 0 && in.to_page >= in.from_page)
      {
        m_printer.setPrintRange (QPrinter::PageRange);
        m_printer.setFromTo (in.from_page, in.to_page);
      }
    if (in.output_file && *in.output_file && spec->print_to_file)
      {
        m_printer.setOutputFileName (str (in.output_file));
        m_startOnFile = true;
      }
    if (in.color >= 0)
      m_printer.setColorMode (in.color ? QPrinter::Color : QPrinter::GrayScale);
    if (in.reverse >= 0)
      m_printer.setPageOrder (in.reverse ? QPrinter::LastPageFirst : QPrinter::FirstPageFirst);
    if (in.paper_width_mm > 0 && in.paper_height_mm > 0)
      m_printer.setPageSize (QPageSize (QSizeF (in.paper_width_mm, in.paper_height_mm), QPageSize::Millimeter,
                                        str (in.paper_display), QPageSize::FuzzyMatch));
    else if (in.paper_name && *in.paper_name)
      {
        for (int i = 0; i <= int (QPageSize::LastPageSize); i++)
          if (QPageSize::key (QPageSize::PageSizeId (i)).compare (str (in.paper_name), Qt::CaseInsensitive) == 0)
            {
              m_printer.setPageSize (QPageSize (QPageSize::PageSizeId (i)));
              break;
            }
      }

    m_dialog = new QPrintDialog (&m_printer, nullptr);
    m_dialog->setObjectName (QStringLiteral ("limen-print-dialog"));
    m_dialog->setWindowTitle (spec->title && *spec->title ? str (spec->title) : i18nc ("@title:window", "Print"));
    /* Qt's dialog writes files only as PDF: offered when the app can send PDF. */
    m_dialog->setOption (QAbstractPrintDialog::PrintToFile, spec->print_to_file != 0);
    m_dialog->setOption (QAbstractPrintDialog::PrintPageRange, true);
    m_dialog->setOption (QAbstractPrintDialog::PrintCollateCopies, true);
    /* Only ranges the app can render: it said whether it has a current page or a selection. */
    m_dialog->setOption (QAbstractPrintDialog::PrintCurrentPage, spec->has_current_page != 0);
    m_dialog->setOption (QAbstractPrintDialog::PrintSelection, spec->has_selected_pages != 0);
    m_dialog->setMinMax (1, 9999);
    /* PreparePrint's answer is printed by the app right away, so the button says Print
     * (as in the reference and in GTK's own dialog), or what the app asked it to say. */
    if (spec->accept_label && *spec->accept_label)
      if (auto *box = m_dialog->findChild<QDialogButtonBox *> ())
        if (QPushButton *ok = box->button (QDialogButtonBox::Ok))
          ok->setText (LimenQt::mnemonicLabel (spec->accept_label));
    QObject::connect (m_dialog, &QDialog::finished, this, [this] (int result) { report (result == QDialog::Accepted); });
  }

  ~PrintHandle () override { delete m_dialog; }

  void start ()
  {
    LimenQt::applyWindow (m_dialog, &m_window_copy);
    m_dialog->show ();
    /* Qt's dialog adds its file entry (last in the printer list) when shown, and starts on
     * the default printer even with a file name set: choose the file as the settings did. */
    if (m_startOnFile)
      if (auto *printers = m_dialog->findChild<QComboBox *> (QStringLiteral ("printers")))
        printers->setCurrentIndex (printers->count () - 1);
    m_dialog->raise ();
    m_dialog->activateWindow ();
  }

  LimenQtWindow m_window_copy {};
  QByteArray m_parent_copy;

protected:
  void onFinished (bool) override {}

private:
  void report (bool accepted)
  {
    m_dialog->hide ();
    if (!accepted)
      {
        complete ([this] { m_done (this, LIMEN_QT_RESPONSE_CANCELLED, nullptr, m_user_data); });
        return;
      }
    const bool toFile = m_printer.outputFormat () == QPrinter::PdfFormat && !m_printer.outputFileName ().isEmpty ();
    const QByteArray file = toFile ? QFile::encodeName (m_printer.outputFileName ()) : QByteArray ();
    const QByteArray printer = toFile ? QByteArray () : m_printer.printerName ().toUtf8 ();
    const QPageLayout layout = m_printer.pageLayout ();
    const QPageSize size = layout.pageSize ();
    const QByteArray key = size.key ().toUtf8 ();
    const QByteArray name = size.name ().toUtf8 ();
    const QSizeF mm = size.size (QPageSize::Millimeter);
    const QMarginsF margins = layout.margins (QPageLayout::Millimeter);
    LimenQtPrintSettings out;
    out.printer = printer.constData ();
    out.copies = qMax (1, m_printer.copyCount ());
    out.collate = m_printer.collateCopies ();
    out.duplex = m_printer.duplex () == QPrinter::DuplexLongSide ? 1 : m_printer.duplex () == QPrinter::DuplexShortSide ? 2 : 0;
    out.orientation = layout.orientation () == QPageLayout::Landscape ? 1 : 0;
    out.from_page = m_printer.printRange () == QPrinter::PageRange ? m_printer.fromPage () : 0;
    out.to_page = m_printer.printRange () == QPrinter::PageRange ? m_printer.toPage () : 0;
    out.color = m_printer.colorMode () == QPrinter::Color;
    out.reverse = m_printer.pageOrder () == QPrinter::LastPageFirst;
    out.output_file = toFile ? file.constData () : nullptr;
    out.page_set = m_printer.printRange () == QPrinter::CurrentPage ? 1
                   : m_printer.printRange () == QPrinter::Selection ? 2 : 0;
    out.paper_name = key.constData ();
    out.paper_display = name.constData ();
    out.paper_width_mm = mm.width ();
    out.paper_height_mm = mm.height ();
    out.margin_top_mm = margins.top ();
    out.margin_bottom_mm = margins.bottom ();
    out.margin_left_mm = margins.left ();
    out.margin_right_mm = margins.right ();
    complete ([&] { m_done (this, LIMEN_QT_RESPONSE_OK, &out, m_user_data); });
  }

  LimenQtPrintDone m_done;
  void *m_user_data;
  QPrinter m_printer;
  QPrintDialog *m_dialog = nullptr;
  bool m_startOnFile = false;
};

} // namespace

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_print_open (const LimenQtPrintSpec *spec, LimenQtPrintDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *handle = new PrintHandle (spec, done, user_data);
  handle->m_parent_copy = QByteArray (spec->window.parent_window ? spec->window.parent_window : "");
  handle->m_window_copy = spec->window;
  handle->m_window_copy.parent_window = handle->m_parent_copy.constData ();
  handle->m_window_copy.app_id = nullptr;
  handle->start ();
  return handle;
}
