"""volume_capacity_state

Revision ID: 5a7d2c91e0f3
Revises: 3c1f0b2a9d41
Create Date: 2026-11-23 11:40:00
"""

from alembic import op
import sqlalchemy as sa

revision = '5a7d2c91e0f3'
down_revision = '3c1f0b2a9d41'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'volume_capacity_state',
        sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('generation', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_volume_capacity_state'))


def downgrade():
    op.drop_table('volume_capacity_state')
