// A tiny line chart of recent values (the GPU power of the last minute).
import QtQuick

Canvas {
    id: root
    property var values: []
    property color lineColor: "#3daee9"
    onValuesChanged: requestPaint()
    onWidthChanged: requestPaint()

    onPaint: {
        const ctx = getContext("2d")
        ctx.reset()
        const v = root.values
        if (!v || v.length < 2)
            return
        let lo = v[0], hi = v[0]
        for (let i = 1; i < v.length; ++i) {
            lo = Math.min(lo, v[i])
            hi = Math.max(hi, v[i])
        }
        const span = Math.max(hi - lo, 1e-6)
        ctx.strokeStyle = root.lineColor
        ctx.lineWidth = 1.5
        ctx.beginPath()
        for (let j = 0; j < v.length; ++j) {
            const x = j * (root.width - 1) / (v.length - 1)
            const y = root.height - 1 - (v[j] - lo) / span * (root.height - 2)
            if (j === 0)
                ctx.moveTo(x, y)
            else
                ctx.lineTo(x, y)
        }
        ctx.stroke()
    }
}
