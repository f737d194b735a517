"""SQLModel tables of the state store; they never leave the store package.

The tables have their own ``MetaData`` (not SQLModel's global one), so migrations and the
autogenerate drift check see exactly these tables and nothing another module defines. Column
types are spelled out rather than inferred, so a change in SQLModel's defaults cannot make the
tables drift from the hand-written migrations.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Float, Index, Integer, MetaData, String, Text, text
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import registry
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel

__all__ = ["NAMING_CONVENTION", "RunRow", "SquadRow", "UTCDateTime", "metadata"]

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Named constraints, so later (batch) migrations can drop or alter them by name."""

metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC in, timezone-aware UTC out, on every backend.

    Postgres keeps the offset (``timestamptz``); SQLite drops it, so UTC wall time is stored
    there and the offset is put back on read. Naive values are refused rather than guessed at.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r} given; pass a timezone-aware one")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.utcoffset() is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class _Table(SQLModel, registry=registry(metadata=metadata)):
    """Base of the store's tables: binds them to :data:`metadata`."""


class SquadRow(_Table, table=True):
    __tablename__ = "squads"

    name: str = Field(sa_type=String, primary_key=True)
    workspace: str = Field(sa_type=String)
    source: str | None = Field(default=None, sa_type=String)
    definition_sha256: str = Field(sa_type=String(64))
    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)


class RunRow(_Table, table=True):
    __tablename__ = "runs"
    __table_args__ = (Index("ix_runs_squad_created_at", "squad", "created_at"),)

    id: str = Field(sa_type=String, primary_key=True)
    squad: str = Field(sa_type=String, foreign_key="squads.name", ondelete="CASCADE")
    status: str = Field(sa_type=String(32))
    trigger: str = Field(sa_type=String)
    created_at: datetime = Field(sa_type=UTCDateTime)
    started_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    ended_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    error: str | None = Field(default=None, sa_type=Text)
    tokens_in: int = Field(
        default=0, sa_type=Integer, sa_column_kwargs={"server_default": text("0")}
    )
    tokens_out: int = Field(
        default=0, sa_type=Integer, sa_column_kwargs={"server_default": text("0")}
    )
    cost_usd: float = Field(
        default=0.0, sa_type=Float, sa_column_kwargs={"server_default": text("0")}
    )
