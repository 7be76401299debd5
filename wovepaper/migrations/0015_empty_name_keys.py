"""Name keys of names that fold to nothing ("?", "!!!") become "", as
``curation.names.name_key`` now gives them: stored as "|", any two such
authorships of two papers counted as one shared co-author."""

from django.db import migrations


def forward(apps, schema_editor):
    Authorship = apps.get_model("wovepaper", "Authorship")
    Authorship.objects.filter(name_key="|").update(name_key="")


class Migration(migrations.Migration):
    dependencies = [("wovepaper", "0014_string_list_validators")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
