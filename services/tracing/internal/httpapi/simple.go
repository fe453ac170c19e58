package httpapi

import "github.com/labstack/echo/v4"

func (h *Handler) registerSimple(e *echo.Echo) {}
