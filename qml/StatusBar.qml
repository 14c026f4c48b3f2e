// Decode speed and time to first token of the current reply, context fill, backend and device,
// and the live GPU readings (power, gfx clock, contention) with the full snapshot as a tooltip
// and the power of the last minute as a sparkline.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

ToolBar {
    id: root
    objectName: "statusBar"
    height: 28
    position: ToolBar.Footer
    readonly property TelemetryFeed feed: ChatController.telemetry

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 10
        anchors.rightMargin: 10
        spacing: 18

        Label {
            objectName: "statusSpeed"
            text: ChatController.decodeTokS > 0 || ChatController.ttftMs > 0
                  ? qsTr("%1 tok/s · first token %2 ms").arg(ChatController.decodeTokS.toFixed(1)).arg(Math.round(ChatController.ttftMs))
                  : qsTr("— tok/s")
            Accessible.name: qsTr("Decode speed and time to first token")
            ToolTip.visible: speedHover.hovered && ChatController.prefillTokS > 0
            ToolTip.text: qsTr("Prompt read at %1 tok/s").arg(ChatController.prefillTokS.toFixed(0))
            HoverHandler {
                id: speedHover
            }
        }
        Label {
            objectName: "statusContext"
            text: ChatController.contextLength > 0
                  ? qsTr("context %1 / %2").arg(ChatController.contextUsed).arg(ChatController.contextLength)
                  : qsTr("context —")
            Accessible.name: qsTr("Context fill")
            // How the conversation's context came back on the last switch (woken from its
            // park file, or recomputed and why).
            ToolTip.visible: contextHover.hovered && ChatController.contextNote.length > 0
            ToolTip.text: ChatController.contextNote
            HoverHandler {
                id: contextHover
            }
        }
        Item { Layout.fillWidth: true }
        Label {
            objectName: "statusBackend"
            Layout.maximumWidth: 360
            text: ChatController.backendText
            elide: Text.ElideRight
            Accessible.name: qsTr("Backend and device")
            ToolTip.visible: backendHover.hovered && ChatController.gpuNote.length > 0
            ToolTip.text: ChatController.gpuNote
            HoverHandler {
                id: backendHover
            }
        }
        Sparkline {
            objectName: "powerSparkline"
            Layout.preferredWidth: 60
            Layout.preferredHeight: 16
            visible: root.feed.powerHistory.length > 1
            values: root.feed.powerHistory
        }
        Label {
            objectName: "statusGpu"
            Layout.maximumWidth: 420
            elide: Text.ElideRight
            text: root.feed.hasGpu ? root.feed.gpuText + " · " + root.feed.contention
                                   : root.feed.gpuText + (root.feed.contention.length > 0 ? " · " + root.feed.contention : "")
            opacity: root.feed.hasGpu ? 1 : 0.7
            Accessible.name: qsTr("GPU power, clock and contention")
            ToolTip.visible: gpuHover.hovered && root.feed.details.length > 0
            ToolTip.text: (root.feed.gpuReason.length > 0 ? root.feed.gpuReason + "\n\n" : "") + root.feed.details
            HoverHandler {
                id: gpuHover
            }
        }
    }
}
