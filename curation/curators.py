"""Curator accounts: the curators group, its permissions, and
:func:`curator_ensure`.
"""

from __future__ import annotations

from django.db import transaction

CURATORS_GROUP = "curators"
CURATOR_PERMISSIONS = (
    ("curation", "view_proposal"),
    ("curation", "change_proposal"),
    ("curation", "decide_proposal"),
    ("curation", "view_curationevent"),
    ("curation", "view_constraint"),
    ("curation", "undo_curationevent"),
    ("curation", "view_claimrequest"),
    ("curation", "decide_claimrequest"),
    ("curation", "view_matchermodel"),
    ("wovepaper", "change_researcher"),
    ("wovepaper", "merge_researcher"),
    ("wovepaper", "split_researcher"),
    ("wovepaper", "move_authorship"),
    ("wovepaper", "lock_researcher"),
    ("wovepaper", "view_researcher"),
    ("wovepaper", "view_paper"),
    ("wovepaper", "view_authorship"),
    ("harvest", "view_harvestrun"),
    ("harvest", "view_rawrecord"),
    ("harvest", "view_sourceauthor"),
)


@transaction.atomic
def curator_ensure(*, username: str, password: str, email: str = ""):
    """Create (or refresh) a staff user in the ``curators`` group.

    Args:
        username: login name.
        password: the password to set.
        email: optional address.

    Returns:
        The user, staff, member of ``curators`` whose permissions are
        :data:`CURATOR_PERMISSIONS`.
    """
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group, Permission

    group, _ = Group.objects.get_or_create(name=CURATORS_GROUP)
    perms = [
        Permission.objects.get(content_type__app_label=app, codename=code)
        for app, code in CURATOR_PERMISSIONS
    ]
    group.permissions.set(perms)
    user, _ = get_user_model().objects.get_or_create(
        username=username, defaults={"email": email}
    )
    user.is_staff = True
    user.set_password(password)
    user.save()
    user.groups.add(group)
    return user
