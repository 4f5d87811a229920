/* Limen — kcm_limen_permissions: the permissions page as a System Settings module.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <QVBoxLayout>

#include <KCModule>
#include <KLocalizedString>
#include <KPluginFactory>

#include "permissions-page.h"

class LimenPermissionsModule : public KCModule
{
  Q_OBJECT
public:
  LimenPermissionsModule (QWidget *parent, const QVariantList &args)
    : KCModule (parent, args)
  {
    auto *layout = new QVBoxLayout (this);
    layout->setContentsMargins (0, 0, 0, 0);
    m_page = new LimenPermissionsPage (this);
    layout->addWidget (m_page);
    /* Each change is written at once; there is nothing to apply or undo. */
    setButtons (KCModule::NoAdditionalButton);
  }

  void load () override { m_page->reload (); }

private:
  LimenPermissionsPage *m_page;
};

K_PLUGIN_CLASS_WITH_JSON (LimenPermissionsModule, "kcm_limen_permissions.json")

#include "kcm.moc"
