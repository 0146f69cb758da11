package web

import "github.com/gin-gonic/gin"

// deskRoutes registers the desk's pages.
func (s *server) deskRoutes(e *gin.Engine) {}
