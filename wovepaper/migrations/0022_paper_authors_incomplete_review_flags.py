"""``Paper.authors_incomplete`` and ``Paper.review_flags`` (issue 49).

``authors_incomplete``: the source's byline lists only some of the authors ("et
al.", "additional authors not shown"), shown on the page and in the API.
``review_flags``: what the harvest found for a curator to look at ("possible
repeated author"). Existing papers read False and none until harvested again.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("wovepaper", "0021_paper_embedding"),
    ]

    operations = [
        migrations.AddField(
            model_name="paper",
            name="review_flags",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="What a curator should look at, as the harvest found it "
                "(e.g. 'possible repeated author').",
            ),
        ),
        migrations.AddField(
            model_name="paper",
            name="authors_incomplete",
            field=models.BooleanField(
                default=False,
                help_text="The source's byline lists only some authors (arXiv's "
                "'et al.', 'additional authors not shown').",
            ),
        ),
    ]
