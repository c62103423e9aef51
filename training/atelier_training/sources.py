"""The photographs Atelier trains its upscalers on: file, package and licence as each package's
debian/copyright states them (prepare_data.py --write-manifest pins versions and sha256 in data/manifest.tsv).

Chosen by looking at every image of the candidate packages and keeping only photographs: renders,
illustrations and gradients teach an upscaler the wrong textures. Left out: gnome-backgrounds 43.1 (its
photographs are gone; only illustrations remain, though debian/copyright still lists the old files),
ukui-wallpapers (illustrations), lomiri-wallpapers (one drawing in the binary package), MATE's abstract
and desktop folders, and plasma-workspace-wallpapers' renders and drawings.

plasma-workspace-wallpapers' debian/copyright gives GPL-2+ for every file; each wallpaper's upstream
metadata.json says LGPL-3 for the photographs kept here. Both are free licences; the manifest records
the Debian one, and the upstream one in the copyright column.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    package: str
    file: str  # path inside the package
    licence: str  # SPDX identifier, as debian/copyright gives it
    copyright: str


SOURCES: list[Source] = [
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/Aqua.jpg", "GPL-2.0-or-later", "2008, Charles Barbin"),
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/LadyBird.jpg", "GPL-2.0-or-later", "2008, Charles Barbin"),
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/YellowFlower.jpg", "GPL-2.0-or-later", "2008, Charles Barbin"),
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/Garden.jpg", "GPL-2.0-or-later", "2008, Charles Barbin"),
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/Blinds.jpg", "GPL-2.0-or-later", "2008, Lennart Poettering; 2008, Andrea Cimitan"),
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/Dune.jpg", "GPL-2.0-or-later", "2007, Marco Cogoni; 2008, Hylke Bons"),
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/FreshFlower.jpg", "GPL-2.0-or-later", "2005, Jens Ansorg"),
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/GreenMeadow.jpg", "GPL-2.0-or-later", "2005, Timothy Schellhase; 2008, Lapo Calamandrei"),
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/RainDrops.jpg", "GPL-2.0-or-later", "2008, blackcombwhistler07"),
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/Storm.jpg", "GPL-2.0-or-later", "2008, Sergey Nazarov"),
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/TwoWings.jpg", "GPL-2.0-or-later", "2008, Charles Barbin; 2008, Hylke Bons"),
    Source("mate-backgrounds", "usr/share/backgrounds/mate/nature/Wood.jpg", "GPL-2.0-or-later", "2008, Jean-François Fortin Tam"),
    Source("plasma-workspace-wallpapers", "usr/share/wallpapers/BytheWater/contents/images/2560x1600.jpg", "GPL-2.0-or-later", "Maciej Wiklo (upstream metadata.json: LGPL-3.0)"),
    Source("plasma-workspace-wallpapers", "usr/share/wallpapers/ColdRipple/contents/images/2560x1600.jpg", "GPL-2.0-or-later", "Risto Saukonpää (upstream metadata.json: LGPL-3.0)"),
    Source("plasma-workspace-wallpapers", "usr/share/wallpapers/ColorfulCups/contents/images/2560x1600.jpg", "GPL-2.0-or-later", "Dmitri Popov (upstream metadata.json: LGPL-3.0)"),
    Source("plasma-workspace-wallpapers", "usr/share/wallpapers/DarkestHour/contents/images/2560x1600.jpg", "GPL-2.0-or-later", "Risto Saukonpää (upstream metadata.json: LGPL-3.0)"),
    Source("plasma-workspace-wallpapers", "usr/share/wallpapers/EveningGlow/contents/images/2560x1600.jpg", "GPL-2.0-or-later", "Ian Hex (upstream metadata.json: LGPL-3.0)"),
    Source("plasma-workspace-wallpapers", "usr/share/wallpapers/FallenLeaf/contents/images/2560x1600.jpg", "GPL-2.0-or-later", "Martin Klapetek (upstream metadata.json: LGPL-3.0)"),
    Source("plasma-workspace-wallpapers", "usr/share/wallpapers/Grey/contents/images/2560x1600.jpg", "GPL-2.0-or-later", "Sigi Sagi (upstream metadata.json: LGPL-3.0)"),
    Source("plasma-workspace-wallpapers", "usr/share/wallpapers/Kite/contents/images/2560x1600.jpg", "GPL-2.0-or-later", "Risto Saukonpää (upstream metadata.json: LGPL-3.0)"),
    Source("plasma-workspace-wallpapers", "usr/share/wallpapers/OneStandsOut/contents/images/2560x1600.jpg", "GPL-2.0-or-later", "Risto Saukonpää (upstream metadata.json: LGPL-3.0)"),
    Source("plasma-workspace-wallpapers", "usr/share/wallpapers/Path/contents/images/2560x1600.jpg", "GPL-2.0-or-later", "Risto Saukonpää (upstream metadata.json: LGPL-3.0)"),
    Source("plasma-workspace-wallpapers", "usr/share/wallpapers/summer_1am/contents/images/2560x1600.jpg", "GPL-2.0-or-later", "Risto Saukonpää (upstream metadata.json: LGPL-3.0)"),
]
