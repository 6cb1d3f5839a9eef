"""The task API (seed 004's shapes) on the daemon's HTTP server: plans created, confirmed, followed.

| call | answer |
| POST /api/tasks {"requirement"} | {id, status} (201) |
| GET /api/tasks | {"tasks": [...]} |
| GET /api/tasks/{id}/plan | {status, execution_plan} |
| POST /api/tasks/{id}/confirm {"approved", "user_notes"?} | {status}; 409 when not waiting |
| GET /api/tasks/{id}/progress | {status, current_step, total_steps, execution_history} |
| GET /api/tasks/{id} | the whole task |
| POST /api/tasks/{id}/cancel | {status}; 409 when already finished |
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from voiced.errors import short_repr
from voiced.plans.engine import NotWaiting, UnknownTask
from voiced.plans.rules import PlanRefused
from voiced.plans.setup import Plans
from voiced.web.bodies import BadRequest, error, field, json_object, path_text

MAX_NOTES_CHARS = 500


class TaskApi:
    def __init__(self, plans: Plans) -> None:
        self._plans = plans

    async def create(self, request: Request) -> Response:
        try:
            requirement = field(await json_object(request), "requirement", str)
        except BadRequest as exc:
            return error(str(exc), exc.status)
        planner = self._plans.planner
        try:
            plan = await self._plans.make(requirement)
        except PlanRefused as exc:
            return error(f"field 'requirement' cannot be planned: {exc}", 422)
        view = await self._plans.engine.create(
            requirement, plan, needs_confirmation=planner.needs_confirmation(plan)
        )
        return JSONResponse({"id": view["id"], "status": view["status"]}, status_code=201)

    async def list(self, request: Request) -> Response:
        return JSONResponse({"tasks": await self._plans.engine.views()})

    async def _view(self, request: Request) -> dict[str, Any] | Response:
        task_id = path_text(request, "task_id")
        try:
            return await self._plans.engine.view(task_id)
        except UnknownTask:
            return error(f"no task {short_repr(task_id)}", 404)

    async def one(self, request: Request) -> Response:
        view = await self._view(request)
        return view if isinstance(view, Response) else JSONResponse(view)

    async def plan(self, request: Request) -> Response:
        view = await self._view(request)
        if isinstance(view, Response):
            return view
        return JSONResponse({"status": view["status"], "execution_plan": view["execution_plan"]})

    async def progress(self, request: Request) -> Response:
        view = await self._view(request)
        if isinstance(view, Response):
            return view
        keys = ("status", "current_step", "total_steps", "execution_history", "waiting_for")
        return JSONResponse({key: view[key] for key in keys})

    async def confirm(self, request: Request) -> Response:
        view = await self._view(request)
        if isinstance(view, Response):
            return view
        try:
            body = await json_object(request)
            approved = field(body, "approved", bool)
            notes = (
                field(body, "user_notes", str, max_chars=MAX_NOTES_CHARS) if body.get("user_notes") else ""
            )
            unknown = sorted(set(body) - {"approved", "user_notes"})
            if unknown:
                raise BadRequest(f"unknown field {unknown[0]!r}: expected 'approved' and 'user_notes'")
        except BadRequest as exc:
            return error(str(exc), exc.status)
        try:
            status = await self._plans.engine.confirm(str(view["id"]), approved, notes)
        except NotWaiting as exc:
            return error(str(exc), 409)
        return JSONResponse({"id": view["id"], "status": status})

    async def cancel(self, request: Request) -> Response:
        view = await self._view(request)
        if isinstance(view, Response):
            return view
        try:
            status = await self._plans.engine.cancel(str(view["id"]), "cancelled from the web")
        except NotWaiting as exc:
            return error(str(exc), 409)
        return JSONResponse({"id": view["id"], "status": status})


def task_routes(plans: Plans) -> list[Route]:
    api = TaskApi(plans)
    return [
        Route("/api/tasks", api.create, methods=["POST"]),
        Route("/api/tasks", api.list, methods=["GET"]),
        Route("/api/tasks/{task_id}", api.one, methods=["GET"]),
        Route("/api/tasks/{task_id}/plan", api.plan, methods=["GET"]),
        Route("/api/tasks/{task_id}/progress", api.progress, methods=["GET"]),
        Route("/api/tasks/{task_id}/confirm", api.confirm, methods=["POST"]),
        Route("/api/tasks/{task_id}/cancel", api.cancel, methods=["POST"]),
    ]
